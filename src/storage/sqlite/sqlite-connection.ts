import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../sql/database.js';
import { applySqliteSettings } from './sqlite-settings.js';

export interface SqliteConnection {
  db: Kysely<Database>;
  raw: BetterSqlite3.Database;
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
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database: raw }) }), raw };
}
