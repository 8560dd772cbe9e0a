import { statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { type Command, CommandError, parseCommandArgs, UsageError } from '../command.js';
import { describeDatabase } from '../describe.js';

function size(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

const count = (n: number) => n.toLocaleString('en-US');

/** Where an engine with its own backup tools sends the operator. */
const POSTGRES_ADVICE =
  'backs up SQLite databases only; for PostgreSQL use its own tools: pg_dump for a copy, ' +
  "or your provider's point-in-time recovery (PITR) for continuous backups " +
  '(docs/operations.md#backups)';

export const backup: Command = {
  name: 'backup',
  summary: 'copy the SQLite database to a file while servers keep running',
  help: [
    'Usage: petstore backup <file> [--force]',
    '',
    "Writes a consistent copy of the DATABASE_URL SQLite database to <file>, with SQLite's online",
    'backup API, while servers keep serving reads and writes: every pet acknowledged before the',
    'backup began is in it. The copy is readable by its owner only (0600) and holds everything the',
    'service keeps: pets, keys, idempotency records, recorded bans.',
    '',
    'Options:',
    '  --force   replace <file> if it exists (the old copy stays whole until the new one is)',
    '',
    'To restore, stop the servers, put the copy in place of the database file, delete the -wal and',
    '-shm files beside it, and start them. For PostgreSQL use pg_dump or point-in-time recovery.',
  ].join('\n'),
  // A backup copies the database as it is; migrating it first would change what is copied.
  migrateOnOpen: false,
  needsExistingDatabase: true,
  prepare(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      { force: { type: 'boolean', default: false } },
      true,
    );
    const [file, ...extra] = positionals;
    if (file === undefined || file === '') throw new UsageError('the file to write is required');
    if (extra.length > 0) {
      throw new UsageError(`one file at a time, please (got ${positionals.length})`);
    }
    const overwrite = values.force === true;

    return async ({ services, stderr }) => {
      const { storage, config } = services;
      if (storage.backup === undefined) throw new CommandError(POSTGRES_ADVICE);
      const started = performance.now();
      const outcome = await storage.backup(file, { overwrite }).catch((error: unknown) => {
        throw new CommandError(cannotWrite(file, error));
      });
      const seconds = (performance.now() - started) / 1000;
      switch (outcome.kind) {
        case 'exists':
          if (isFolder(file)) throw new CommandError(cannotWrite(file, { code: 'EISDIR' }));
          throw new CommandError(`${file} exists; pass --force to replace it`);
        case 'is_source':
          throw new CommandError(`${file} is the database itself; write the copy to another file`);
        case 'copied':
          stderr.write(
            `Backed up ${describeDatabase(config.database)} to ${file}: ` +
              `${count(outcome.pages)} pages of ${count(outcome.pageSize)} bytes ` +
              `(${size(outcome.bytes)}) in ${seconds.toFixed(2)} s.\n`,
          );
      }
    };
  },
};

function isFolder(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}

/** A sentence for why the copy could not be written, instead of the system call's code. */
function cannotWrite(file: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reason =
    code === 'ENOENT'
      ? 'its folder does not exist; create it first or pick another path'
      : code === 'EISDIR'
        ? 'it is a folder; name a file inside it, e.g. ' + `${file.replace(/\/+$/, '')}/petstore.db`
        : code === 'EACCES' || code === 'EPERM'
          ? 'this user may not write there'
          : code === 'ENOSPC'
            ? 'the disk is full'
            : code === 'ENOTDIR'
              ? 'a part of the path is a file, not a folder'
              : error instanceof Error
                ? error.message
                : String(error);
  return `cannot write the backup to ${file}: ${reason}`;
}
