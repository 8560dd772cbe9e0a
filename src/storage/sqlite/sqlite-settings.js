// @ts-check
import { accessSync, constants } from 'node:fs';

/**
 * The settings every SQLite connection of the service runs with, applied by this one function: the
 * main connection (reads, migrations) and the commit worker's (every write) alike, so the one
 * that commits cannot drift from the one a reader checks. Plain JavaScript: the worker thread runs
 * it as it is (see sqlite-commit-worker.js).
 */

/** How long a connection waits for another's write lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * How long the commit worker waits for another process's write lock (the CLI, a script) before
 * the writes it carries are answered 503: the busy timeout, well within a request's time. It
 * waits in slices of this length, so that a shutdown can stop the wait at once.
 */
export const WRITE_LOCK_SLICE_MS = 50;

/**
 * SQLite's primary result codes that say the database cannot take writes now (another process's
 * lock, a full disk, a read-only or immutable file, an I/O error, a file it cannot open), not
 * that the statement is wrong: each is answered as an outage (503), never as a bug (500).
 * better-sqlite3 reports extended codes (SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED, ...),
 * matched by their primary code.
 */
const UNAVAILABLE_CODES = [
  'SQLITE_BUSY',
  'SQLITE_FULL',
  'SQLITE_READONLY',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
  'SQLITE_PROTOCOL',
];

/**
 * @param {unknown} code an error's `code`
 * @returns {boolean}
 */
export function isUnavailableCode(code) {
  return (
    typeof code === 'string' &&
    UNAVAILABLE_CODES.some((primary) => code === primary || code.startsWith(`${primary}_`))
  );
}

/**
 * @param {import('better-sqlite3').Database} db
 * @param {{ inMemory: boolean }} options
 */
export function applySqliteSettings(db, options) {
  // First, so that another connection opening the same file waits instead of failing.
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  // SQLite keeps the old mode, silently, where WAL cannot work (some network file systems).
  const mode = db.pragma('journal_mode = WAL', { simple: true });
  if (!options.inMemory && mode !== 'wal') {
    throw new Error(
      `SQLite cannot use WAL mode for ${db.name} (it stays in ${String(mode)} mode); ` +
        'put the database on a local file system',
    );
  }
  // FULL: the WAL is fsynced at every commit, before we answer 201, so a commit survives a
  // power cut, not only a crash of the process.
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  // Every INTEGER comes back as bigint, so a categoryId above 2^53 is never rounded.
  db.defaultSafeIntegers(true);
}

/**
 * The settings of this connection that decide what survives a crash, read back from SQLite.
 * @param {import('better-sqlite3').Database} db
 * @returns {{ journal_mode: string, synchronous: number, synchronous_name: string }}
 */
export function readSqliteDurability(db) {
  const synchronous = Number(db.pragma('synchronous', { simple: true }));
  return {
    journal_mode: String(db.pragma('journal_mode', { simple: true })),
    synchronous,
    // What the number means, for the person reading the start line.
    synchronous_name:
      ['OFF', 'NORMAL', 'FULL', 'EXTRA'][synchronous] ?? `unknown (${String(synchronous)})`,
  };
}

/**
 * The first of these files that exists and cannot be written (immutable, read-only, another
 * owner's), with why; undefined when all can be (one access() call each, under a microsecond).
 * SQLite writes the WAL index (-shm) through a shared mapping, readers too (their read marks): on
 * ext4 a store into a clean mapped page of an immutable file is a SIGBUS that kills the process
 * instead of an error, so the connection and the commit worker ask this first. A `chattr +i`
 * landing between the question and SQLite's store can still do it. A file not there yet is
 * created by SQLite as it needs it.
 * @param {readonly string[]} files
 * @returns {{ file: string, code: string } | undefined}
 */
export function unwritableFile(files) {
  for (const file of files) {
    try {
      accessSync(file, constants.W_OK);
    } catch (error) {
      const code = String(/** @type {{ code?: unknown }} */ (error).code);
      if (code !== 'ENOENT') return { file, code };
    }
  }
  return undefined;
}
