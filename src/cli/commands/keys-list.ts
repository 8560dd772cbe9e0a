import type { ApiKeyRecord } from '../../domain/api-keys/api-key.js';
import { type Command, parseCommandArgs } from '../command.js';
import { describePlan } from '../describe.js';
import { terminalSafe } from '../terminal-text.js';

function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

function state(record: ApiKeyRecord, now: number): string {
  if (record.revokedAt !== undefined) return `revoked ${iso(record.revokedAt)}`;
  if (record.bannedUntil !== undefined && record.bannedUntil > now) {
    return `banned until ${iso(record.bannedUntil)}`;
  }
  return 'active';
}

function columns(record: ApiKeyRecord, now: number): string[] {
  return [
    record.id,
    // Quoted so an empty label or one with spaces still reads as one column.
    JSON.stringify(record.label),
    describePlan(record),
    `${record.displayPrefix}…`,
    state(record, now),
    `created ${iso(record.createdAt)}`,
    record.lastUsedAt === undefined ? 'never used' : `last used ${iso(record.lastUsedAt)}`,
    // Who still calls getPet before its sunset; counted per key, written about once a minute.
    `deprecated calls ${record.deprecatedCalls}`,
  ];
}

export const keysList: Command = {
  name: 'keys list',
  summary: 'list the keys: id, label, plan, display prefix, state (never the key itself)',
  help: [
    'Usage: petstore keys list',
    '',
    'One line per key, oldest first:',
    '  id  "label"  plan and limits  display prefix…  state  created  last used  deprecated calls',
    'where state is active, revoked <time> or banned until <time>. Times are UTC, ISO 8601.',
    'deprecated calls counts calls to the deprecated getPet made with the key (the service',
    'writes the counts about once a minute, and when it stops).',
  ].join('\n'),
  migrateOnOpen: true,
  prepare(args) {
    parseCommandArgs(args, {});
    return async (context) => {
      const records = await context.services.apiKeys.list();
      if (records.length === 0) {
        context.stderr.write(
          'No API keys yet; create one with: petstore keys create --plan free\n',
        );
        return;
      }
      const now = context.services.clock.now();
      const rows = records.map((record) => columns(record, now));
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
