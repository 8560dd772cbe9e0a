import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../sql/database.js';

export interface SqliteConnection {
  db: Kysely<Database>;
  raw: BetterSqlite3.Database;
}

/** Opens the file (creating its folder) with the settings durability and int64 exactness need. */
export function openSqlite(path: string): SqliteConnection {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const raw = new BetterSqlite3(path);
  // First, so that another connection opening the same file waits instead of failing.
  raw.pragma('busy_timeout = 5000');
  raw.pragma('journal_mode = WAL');
  // FULL: a commit is on disk before we answer 201, also across a power cut, not only a crash.
  raw.pragma('synchronous = FULL');
  raw.pragma('foreign_keys = ON');
  // Every INTEGER comes back as bigint, so a categoryId above 2^53 is never rounded.
  raw.defaultSafeIntegers(true);
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database: raw }) }), raw };
}
