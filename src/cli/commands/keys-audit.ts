import { type Command, notASecret, parseCommandArgs, UsageError } from '../command.js';
import { rfc3339 } from '../key-options.js';

function describeActor(actor: { kind: string; user?: string; host?: string; id?: string }) {
  if (actor.kind === 'cli') return `cli:${actor.user ?? '?'}@${actor.host ?? '?'}`;
  if (actor.kind === 'admin_token') return `admin:${actor.id ?? '?'}`;
  return 'system';
}

export const keysAudit: Command = {
  name: 'keys audit',
  summary: 'the changes made to keys: when, what (old -> new), by whom',
  help: [
    'Usage: petstore keys audit [<keyId>] [--since TIME] [--json]',
    '',
    'One line per change, oldest first: time  key  action  by  field: old -> new ...',
    'by is cli:user@host, admin:<token id>, or system (automatic bans and their end).',
    'Options:',
    '  --since TIME   only changes at or after this RFC 3339 time',
    '  --json         the entries as a JSON array',
    'Never shows a secret or its hash.',
  ].join('\n'),
  migrateOnOpen: true,
  prepare(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      { since: { type: 'string' }, json: { type: 'boolean', default: false } },
      true,
    );
    if (positionals.length > 1) throw new UsageError('at most one key id');
    const keyId = positionals[0];
    if (keyId !== undefined) notASecret(keyId, 'key id', 'key_... column of petstore keys list');
    const since = values.since === undefined ? undefined : rfc3339('--since', values.since);
    return async ({ services, stdout }) => {
      const entries = await services.keys.audit({
        ...(keyId !== undefined ? { keyId } : {}),
        ...(since !== undefined ? { since } : {}),
      });
      if (values.json) {
        stdout.write(`${JSON.stringify(entries)}\n`);
        return;
      }
      for (const entry of entries) {
        const changes = Object.entries(entry.changes).map(
          ([field, { from, to }]) => `${field}: ${JSON.stringify(from)} -> ${JSON.stringify(to)}`,
        );
        stdout.write(
          `${[entry.at, entry.keyId, entry.action, describeActor(entry.actor), ...changes].join('  ')}\n`,
        );
      }
    };
  },
};
