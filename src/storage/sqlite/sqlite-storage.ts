import { sql } from 'kysely';
import type { Storage } from '../../domain/ports.js';
import type { DialectTraits } from '../sql/dialect-traits.js';
import { migrate } from '../sql/migrate.js';
import { SqlApiKeyStore } from '../sql/sql-api-key-store.js';
import { SqlIdempotencyStore } from '../sql/sql-idempotency-store.js';
import { backupSqlite } from './sqlite-backup.js';
import { SqlitePetStore } from './sqlite-pet-store.js';
import { openSqlite, type SqliteOpenOptions, sqliteDurability } from './sqlite-connection.js';
import { SQLITE_MIGRATIONS } from './sqlite-migrations.js';
import { SqliteStoreGeneration } from './sqlite-store-generation.js';

export interface SqliteStorage extends Storage {
  /** Reverts the newest migration; for tests and operators. */
  migrateDown(): Promise<string[]>;
  backup: NonNullable<Storage['backup']>;
}

/** One writer at a time: single statements are atomic and there are no row locks to skip. */
const SQLITE_TRAITS: DialectTraits = {
  withFirstKeyLock: (db, insert) => insert(db),
  skipLocked: false,
  // For the Kysely pet store only; SQLite's own (sqlite-pet-store.ts) has one writer, no lock waits.
  boundLockWaits: async () => undefined,
  isLockTimeout: () => false,
  statusPageAsIndexRange: false,
};

export function createSqliteStorage(path: string, options: SqliteOpenOptions = {}): SqliteStorage {
  const { db, raw } = openSqlite(path, options);
  const pets = new SqlitePetStore(db, raw, path);
  const generation = new SqliteStoreGeneration(raw, path);
  let closed = false;
  return {
    backend: 'sqlite',
    pets,
    apiKeys: new SqlApiKeyStore(db, SQLITE_TRAITS),
    idempotency: new SqlIdempotencyStore(db, SQLITE_TRAITS),
    generation,
    async migrate() {
      const applied = await migrate(db, SQLITE_MIGRATIONS, 'latest');
      if (applied.length > 0) await generation.bump();
      return applied;
    },
    migrateDown: () => migrate(db, SQLITE_MIGRATIONS, 'down'),
    async ping() {
      await sql`select 1`.execute(db);
    },
    async analyze() {
      await sql`PRAGMA optimize`.execute(db);
    },
    async durability() {
      return sqliteDurability(raw);
    },
    backup: (destination, backupOptions) => backupSqlite(raw, destination, backupOptions),
    async close() {
      if (closed) return;
      closed = true;
      // Writes still being committed finish first: each was promised a commit or an error.
      await pets.close();
      await db.destroy();
      if (raw.open) raw.close();
    },
  };
}
