import { sql } from 'kysely';
import type { Storage } from '../../domain/ports.js';
import { NO_STORAGE_OBSERVER, type StorageObserver } from '../observer.js';
import type { DialectTraits } from '../sql/dialect-traits.js';
import { databaseEnvironment } from '../sql/database-environment.js';
import { migrate } from '../sql/migrate.js';
import { SqlAdminIdempotencyStore } from '../sql/sql-admin-idempotency-store.js';
import { SqlAdminTokenStore } from '../sql/sql-admin-token-store.js';
import { SqlApiKeyStore } from '../sql/sql-api-key-store.js';
import { SqlIdempotencyStore } from '../sql/sql-idempotency-store.js';
import { SqlKeyAuditStore } from '../sql/sql-key-audit-store.js';
import { SqlKeyUsageStore } from '../sql/sql-key-usage-store.js';
import { backupSqlite } from './sqlite-backup.js';
import { openSqlite, type SqliteOpenOptions } from './sqlite-connection.js';
import { SQLITE_MIGRATIONS } from './sqlite-migrations.js';
import { SqlitePetStore } from './sqlite-pet-store.js';
import { fileIdentity, SqliteStoreGeneration } from './sqlite-store-generation.js';
import { SqliteWriter } from './sqlite-writer.js';

export interface SqliteStorage extends Storage {
  /** Reverts the newest migration; for tests and operators. */
  migrateDown(): Promise<string[]>;
  backup: NonNullable<Storage['backup']>;
  /** The single writer every write goes through (tests reach its worker here). */
  readonly writer: SqliteWriter;
}

/** One writer at a time: a single statement is atomic, and there are no row locks to skip. */
const SQLITE_TRAITS: DialectTraits = {
  firstKeyLock: [],
  skipLocked: false,
  nextKeySeq: '(SELECT coalesce(max(seq), 0) + 1 FROM api_keys)',
  databaseNow: null,
};

export function createSqliteStorage(
  path: string,
  options: SqliteOpenOptions = {},
  observer: StorageObserver = NO_STORAGE_OBSERVER,
): SqliteStorage {
  const connection = openSqlite(path, options);
  const { db, raw, guard } = connection;
  const writer = new SqliteWriter(db, raw, path, observer);
  const generation = new SqliteStoreGeneration(raw, path, guard);
  // The file this process opened. Deleted or replaced under a running server, writes would still
  // succeed into a file no one will ever open again: /readyz says so rather than stay ready.
  const opened = isFile(path) ? fileIdentity(path) : undefined;
  let closed = false;
  return {
    backend: 'sqlite',
    writer,
    pets: new SqlitePetStore(connection, writer),
    apiKeys: new SqlApiKeyStore(db, writer, SQLITE_TRAITS),
    keyAudit: new SqlKeyAuditStore(db),
    keyUsage: new SqlKeyUsageStore(db, writer),
    idempotency: new SqlIdempotencyStore(db, writer, SQLITE_TRAITS),
    adminTokens: new SqlAdminTokenStore(db, writer),
    adminIdempotency: new SqlAdminIdempotencyStore(db, writer),
    generation,
    async migrate() {
      const applied = await migrate(db, SQLITE_MIGRATIONS, 'latest');
      if (applied.length > 0) await generation.bump();
      return applied;
    },
    migrateDown: () => migrate(db, SQLITE_MIGRATIONS, 'down'),
    environment: (claim) => databaseEnvironment(db, claim),
    async ping() {
      await sql`select 1`.execute(db);
      // Reads alone do not make the service ready: the writer must be able to commit. Asked first,
      // so a writer that is down is named as such, whatever else is wrong with the file.
      await writer.ready();
      if (opened !== undefined) assertStillAtPath(path, opened);
    },
    async analyze() {
      await sql`PRAGMA optimize`.execute(db);
    },
    // What the connection that commits uses (the worker's, for a file), not the reading one's.
    durability: () => writer.durability(),
    pollCommitReplies: () => writer.pollCommitReplies(),
    backup: (destination, backupOptions) => {
      guard();
      return backupSqlite(raw, destination, backupOptions);
    },
    async close(options) {
      if (closed) return;
      closed = true;
      // Writes still being committed finish first (until the deadline): each was promised a
      // commit or an error.
      await writer.close(options);
      // Closing the last connection checkpoints, which stores into the WAL index: where that file
      // cannot be written, a SIGBUS (see indexGuard). Left open then; the server ends with
      // process.exit, which runs no native cleanup (that would close it too), and the next open
      // recovers every commit from the WAL.
      try {
        guard();
      } catch {
        return;
      }
      await db.destroy();
      if (raw.open) raw.close();
    },
  };
}

function isFile(path: string): boolean {
  return path !== ':memory:' && path !== '';
}

/** Throws when the file at the path is no longer the one this process has open. */
function assertStillAtPath(path: string, opened: string): void {
  let now: string | undefined;
  try {
    now = fileIdentity(path);
  } catch {
    now = undefined; // unlinked
  }
  if (now !== opened) {
    throw new Error(
      now === undefined
        ? `the database file ${path} was deleted while open: writes go to a file no one will open again; restart the server`
        : `the database file ${path} was replaced while open: this process still uses the old one; restart the server`,
    );
  }
}
