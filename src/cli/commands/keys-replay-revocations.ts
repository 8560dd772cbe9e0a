import { readFile } from 'node:fs/promises';
import { parseAuditLine } from '../audit-lines.js';
import { CommandError, parseCommandArgs, UsageError } from '../command.js';
import { cliActor } from '../key-options.js';
import type { Command } from '../command.js';

async function readAll(stdin: AsyncIterable<string | Buffer>): Promise<string> {
  let text = '';
  for await (const chunk of stdin) text += typeof chunk === 'string' ? chunk : chunk.toString();
  return text;
}

export const keysReplayRevocations: Command = {
  name: 'keys replay-revocations',
  summary: 'revoke again the keys a log of audit lines says were revoked (after a restore)',
  help: [
    'Usage: petstore keys replay-revocations <logfile>',
    '',
    'Reads the JSON lines of a log (the server\'s "key audit" lines, the CLI\'s, or both; - reads',
    'standard input), takes the audit entries of kind revoke, and revokes each key again when it',
    'exists and is not revoked. Every other line is ignored. Running it twice changes nothing more.',
    'Use it after restoring a backup, with the lines written since the backup was taken.',
  ].join('\n'),
  migrateOnOpen: true,
  needsExistingDatabase: true,
  prepare(args) {
    const { positionals } = parseCommandArgs(args, {}, true);
    const [source, ...extra] = positionals;
    if (source === undefined || source === '') {
      throw new UsageError('a log file is required (- reads standard input)');
    }
    if (extra.length > 0) throw new UsageError('one log file at a time, please');
    return async ({ services, stderr, stdin }) => {
      let text: string;
      try {
        text = source === '-' ? await readAll(stdin) : await readFile(source, 'utf8');
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new CommandError(`cannot read ${source}: ${reason}`);
      }
      const keyIds = new Set<string>();
      for (const line of text.split('\n')) {
        const audit = parseAuditLine(line);
        if (audit?.action === 'revoke') keyIds.add(audit.keyId);
      }
      const counts = { revoked: 0, already: 0, missing: 0 };
      for (const keyId of keyIds) {
        const key = await services.keys.get(keyId);
        if (key === undefined) {
          counts.missing += 1;
          stderr.write(`${keyId}: no such key; skipped\n`);
        } else if (key.revokedAt !== null) {
          counts.already += 1;
          stderr.write(`${keyId}: already revoked\n`);
        } else {
          await services.keys.revoke(keyId, cliActor());
          counts.revoked += 1;
          stderr.write(`${keyId}: revoked again\n`);
        }
      }
      stderr.write(
        `Replayed ${keyIds.size} revoked keys: ${counts.revoked} revoked again, ${counts.already} already revoked, ${counts.missing} not found.\n`,
      );
    };
  },
};
