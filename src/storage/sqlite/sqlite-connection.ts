import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { DurabilitySettings } from '../../domain/ports.js';
import type { Database } from '../sql/database.js';

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
    // First, so that another connection opening the same file waits instead of failing.
    raw.pragma('busy_timeout = 5000');
    // SQLite keeps the old mode, silently, where WAL cannot work (some network file systems).
    const mode = raw.pragma('journal_mode = WAL', { simple: true });
    if (!inMemory && mode !== 'wal') {
      throw new Error(
        `SQLite cannot use WAL mode for ${path} (it stays in ${String(mode)} mode); ` +
          'put the database on a local file system',
      );
    }
    // FULL: the WAL is fsynced at every commit, before we answer 201, so a commit survives a
    // power cut, not only a crash of the process.
    raw.pragma('synchronous = FULL');
    raw.pragma('foreign_keys = ON');
    // Every INTEGER comes back as bigint, so a categoryId above 2^53 is never rounded.
    raw.defaultSafeIntegers(true);
  } catch (error) {
    raw.close();
    throw error;
  }
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database: raw }) }), raw };
}

/** The settings of this connection that decide what survives a crash, read back from SQLite. */
export function sqliteDurability(raw: BetterSqlite3.Database): DurabilitySettings {
  const synchronous = Number(raw.pragma('synchronous', { simple: true }));
  return {
    journal_mode: String(raw.pragma('journal_mode', { simple: true })),
    synchronous,
    // What the number means, for the person reading the start line.
    synchronous_name:
      ['OFF', 'NORMAL', 'FULL', 'EXTRA'][synchronous] ?? `unknown (${String(synchronous)})`,
  };
}
