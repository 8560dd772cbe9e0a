import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { DependencyUnavailableError } from '../../domain/errors.js';
import type { Database } from '../sql/database.js';
import { applySqliteSettings, unwritableFile } from './sqlite-settings.js';

export interface SqliteConnection {
  /** Queries through it are guarded (`guard`) already. */
  db: Kysely<Database>;
  /** Statements run on it directly call `guard` first. */
  raw: BetterSqlite3.Database;
  /** Throws DependencyUnavailableError where SQLite could not use the file without a crash. */
  guard: () => void;
}

export interface SqliteOpenOptions {
  /** Refuse a path where no database file exists (instead of creating one): `petstore backup`. */
  mustExist?: boolean;
}

/** The database holds key hashes and every pet: readable by the service's user only. */
export const OWNER_ONLY_FILE = 0o600;
const OWNER_ONLY_FOLDER = 0o700;

/**
 * Creates the folders and the database file, readable by their owner only, before SQLite opens
 * it. SQLite itself would create the file 0644 less the umask; it gives the -wal and -shm files
 * the permissions of the database file (os_unix.c, findCreateFileMode, whatever the umask), so
 * this one mode covers all three. A file that already exists keeps the mode it has. The umask
 * can only take bits away, never add group or other access.
 */
function createOwnerOnly(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: OWNER_ONLY_FOLDER });
  // 'a': create when missing, never truncate; the mode applies only to a file created now.
  closeSync(openSync(path, 'a', OWNER_ONLY_FILE));
}

/** Opens the file (creating its folder) with the settings durability and int64 exactness need. */
export function openSqlite(path: string, options: SqliteOpenOptions = {}): SqliteConnection {
  const inMemory = path === ':memory:';
  if (!inMemory) {
    if (options.mustExist === true && !existsSync(path)) {
      throw new Error(`no SQLite database at ${path} (check DATABASE_URL)`);
    }
    createOwnerOnly(path);
  }
  const raw = new BetterSqlite3(path);
  try {
    applySqliteSettings(raw, { inMemory });
  } catch (error) {
    raw.close();
    throw error;
  }
  const guard = inMemory ? () => undefined : indexGuard(path);
  // Kysely prepares each of its queries: the guard runs before each.
  const database = {
    prepare: (sql: string) => {
      guard();
      return raw.prepare(sql);
    },
    close: () => raw.close(),
  };
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database }) }), raw, guard };
}

/**
 * Any statement, a read too, may store into the WAL index (a reader takes a read mark there), so
 * each asks first whether it can be written (unwritableFile); one that cannot is an outage (503),
 * which ends by itself once it can be again. The commit worker asks it of all three files.
 */
function indexGuard(path: string): () => void {
  const index = [`${path}-shm`];
  return () => {
    const blocked = unwritableFile(index);
    if (blocked === undefined) return;
    throw new DependencyUnavailableError('database', {
      cause: new Error(`SQLite cannot use ${blocked.file}: it cannot be written (${blocked.code})`),
    });
  };
}
