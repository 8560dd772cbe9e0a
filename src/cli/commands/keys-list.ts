import type { KeyView } from '../../domain/api-keys/key-management-service.js';
import { type Command, parseCommandArgs } from '../command.js';
import { describeView } from '../describe.js';
import { terminalSafe } from '../terminal-text.js';

function state(view: KeyView): string {
  switch (view.state) {
    case 'revoked':
      return `revoked ${view.revokedAt ?? ''}`;
    case 'expired':
      return `expired ${view.expiresAt ?? ''}`;
    case 'banned':
      return `banned until ${view.bannedUntil ?? ''}`;
    case 'active':
      return view.expiresAt === null ? 'active' : `active until ${view.expiresAt}`;
  }
}

function columns(view: KeyView): string[] {
  return [
    view.id,
    // Quoted so an empty label or one with spaces still reads as one column.
    JSON.stringify(view.name),
    describeView(view),
    view.scopes.join(','),
    `${view.prefix}…`,
    state(view),
    `created ${view.createdAt}`,
    view.lastUsedAt === null ? 'never used' : `last used ${view.lastUsedAt}`,
    // Who still calls getPet before its sunset; counted per key, written about once a minute.
    `deprecated calls ${view.deprecatedCalls}`,
    ...(view.previousSecretExpiresAt === null
      ? []
      : [`old secret until ${view.previousSecretExpiresAt}`]),
  ];
}

export const keysList: Command = {
  name: 'keys list',
  summary: 'list the keys: id, label, plan, display prefix, state (never the key itself)',
  help: [
    'Usage: petstore keys list [--json]',
    '',
    'One line per key, oldest first:',
    '  id  "label"  plan and limits  scopes  display prefix…  state  created  last used',
    '  deprecated calls',
    'where state is active, active until <time>, expired <time>, revoked <time> or banned until',
    '<time>, and a rolled key shows until when its old secret works. Times are UTC, ISO 8601.',
    'deprecated calls counts calls to the deprecated getPet made with the key; last used is',
    'written about once a minute (both also when the service stops).',
    '  --json   the keys as a JSON array, the shape the admin API returns',
  ].join('\n'),
  migrateOnOpen: true,
  prepare(args) {
    const { values } = parseCommandArgs(args, { json: { type: 'boolean', default: false } });
    return async (context) => {
      const views = await context.services.keys.list();
      if (values.json) {
        context.stdout.write(`${JSON.stringify(views)}\n`);
        return;
      }
      if (views.length === 0) {
        context.stderr.write(
          'No API keys yet; create one with: petstore keys create --plan free\n',
        );
        return;
      }
      const rows = views.map(columns);
      const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => row[i]?.length ?? 0)));
      for (const row of rows) {
        const padded = row.map((cell, i) =>
          i === row.length - 1 ? cell : cell.padEnd(widths?.[i] ?? 0),
        );
        context.stdout.write(`${terminalSafe(padded.join('  '))}\n`);
      }
    };
  },
};
