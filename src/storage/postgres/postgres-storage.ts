import { type Kysely, sql } from 'kysely';
import type { Storage } from '../../domain/ports.js';
import { NO_STORAGE_OBSERVER, type StorageObserver } from '../observer.js';
import type { Database } from '../sql/database.js';
import type { DialectTraits, SqlWrites, StorageTime } from '../sql/dialect-traits.js';
import { databaseEnvironment } from '../sql/database-environment.js';
import {
  migrate,
  migrateIfUpToDate,
  type MigrateOptions,
  migrationStatus,
} from '../sql/migrate.js';
import { SqlAdminIdempotencyStore } from '../sql/sql-admin-idempotency-store.js';
import { SqlAdminTokenStore } from '../sql/sql-admin-token-store.js';
import { SqlApiKeyStore } from '../sql/sql-api-key-store.js';
import { SqlIdempotencyStore } from '../sql/sql-idempotency-store.js';
import { SqlKeyAuditStore } from '../sql/sql-key-audit-store.js';
import { SqlKeyUsageStore } from '../sql/sql-key-usage-store.js';
import {
  IDLE_IN_TRANSACTION_TIMEOUT_MS,
  openPostgres,
  type PostgresConfig,
} from './postgres-connection.js';
import { IdHorizon } from './postgres-id-horizon.js';
import { POSTGRES_MIGRATIONS } from './postgres-migrations.js';
import { PostgresPetStore } from './postgres-pet-store.js';
import { bumpStoreGeneration, PostgresStoreGeneration } from './postgres-store-generation.js';

export interface PostgresStorage extends Storage {
  /** Reverts the newest migration; for tests and operators. */
  migrateDown(): Promise<string[]>;
}

/**
 * Advisory locks of this service, in the two-key space so that they never meet Kysely's own
 * one-key migration lock: the first key is the service, the second the job.
 */
const LOCK_SPACE = 0x70657473; // "pets"
const MIGRATION_LOCK = 1;
const FIRST_KEY_LOCK = 2;

/**
 * Migrations may wait for another instance's migrations and may rebuild an index on a big table:
 * far longer than the statement timeout that protects requests, but never forever.
 */
const MIGRATION_STATEMENT_TIMEOUT_MS = 5 * 60_000;

function postgresTraits(db: Kysely<Database>, time: StorageTime): DialectTraits {
  return {
    // Held until the transaction ends, so the next caller's statement sees the committed key.
    firstKeyLock: [
      sql`SELECT pg_advisory_xact_lock(${sql.lit(LOCK_SPACE)}, ${sql.lit(FIRST_KEY_LOCK)})`.compile(
        db,
      ),
    ],
    skipLocked: true,
    nextKeySeq: 'DEFAULT',
    // clock_timestamp(): the time of reading, not of the transaction's start.
    databaseNow:
      time === 'database'
        ? sql<{
            now: bigint;
          }>`SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now`.compile(db)
        : null,
  };
}

/** The shared stores' writes, each batch in one transaction on the pool. */
function postgresWrites(db: Kysely<Database>): SqlWrites {
  return {
    run: (statements) =>
      db.transaction().execute(async (trx) => {
        const changes: number[] = [];
        for (const statement of statements) {
          const result = await trx.executeQuery(statement);
          changes.push(Number(result.numAffectedRows ?? 0));
        }
        return changes;
      }),
  };
}

/**
 * How long after an id became visible every lower id has committed or will never appear. A transaction inserting pets
 * runs a few statements, each within the statement timeout, with pauses the server cuts at
 * IDLE_IN_TRANSACTION_TIMEOUT_MS; past both, its ids have committed or never will.
 */
export function horizonLagMsFor(statementTimeoutMs: number): number {
  return IDLE_IN_TRANSACTION_TIMEOUT_MS + 4 * statementTimeoutMs;
}

type Migrate<T> = (db: Kysely<Database>, options: MigrateOptions) => Promise<T>;

/** The schema the service's tables are in: the first of the search_path that exists. */
async function currentSchema(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`SELECT current_schema() AS schema`.execute(
    db,
  );
  const schema = rows[0]?.schema ?? null;
  if (schema === null) {
    throw new Error(
      'no schema of the search_path exists in this database; create it or fix the search_path',
    );
  }
  return schema;
}

/**
 * Runs `migrate` on one dedicated connection holding a session advisory lock, so that instances
 * starting together apply each migration once: the others wait, then find nothing pending. The
 * connection comes from a pool of its own with the migration timeout, so no SET can leak into
 * the request pool.
 */
async function withMigrationLock<T>(config: PostgresConfig, migrate: Migrate<T>): Promise<T> {
  const { db } = openPostgres({
    ...config,
    poolMax: 1,
    statementTimeoutMs: MIGRATION_STATEMENT_TIMEOUT_MS,
  });
  try {
    return await db.connection().execute(async (connection) => {
      await sql`SELECT pg_advisory_lock(${sql.lit(LOCK_SPACE)}, ${sql.lit(MIGRATION_LOCK)})`.execute(
        connection,
      );
      try {
        return await migrate(connection, { migrationTableSchema: await currentSchema(connection) });
      } finally {
        // Ending this pool below closes the session, which releases the lock in any case; an
        // unlock failing on a dead connection must not hide the error that explains why.
        await sql`SELECT pg_advisory_unlock(${sql.lit(LOCK_SPACE)}, ${sql.lit(MIGRATION_LOCK)})`
          .execute(connection)
          .catch(() => undefined);
      }
    });
  } finally {
    await db.destroy();
  }
}

export function createPostgresStorage(
  config: PostgresConfig,
  observer: StorageObserver = NO_STORAGE_OBSERVER,
  time: StorageTime = 'database',
): PostgresStorage {
  const { db, writeFailures, poolCounts } = openPostgres(config, observer);
  observer.watchPool(poolCounts);
  const horizon = new IdHorizon(db, horizonLagMsFor(config.statementTimeoutMs));
  const pets = new PostgresPetStore(db, () => horizon.idHorizon(), config.poolMax);
  const writes = postgresWrites(db);
  const traits = postgresTraits(db, time);
  let closed = false;
  return {
    backend: 'postgres',
    pets,
    apiKeys: new SqlApiKeyStore(db, writes, traits),
    keyAudit: new SqlKeyAuditStore(db),
    keyUsage: new SqlKeyUsageStore(db, writes),
    idempotency: new SqlIdempotencyStore(db, writes, traits),
    generation: new PostgresStoreGeneration(db, horizon),
    adminTokens: new SqlAdminTokenStore(db, writes),
    adminIdempotency: new SqlAdminIdempotencyStore(db, writes),
    async migrate() {
      // Nothing is pending at every start but a release's first: that is answered on the request
      // pool, without waiting for the lock while other instances start (they would apply nothing).
      const options = { migrationTableSchema: await currentSchema(db) };
      return (
        (await migrateIfUpToDate(db, POSTGRES_MIGRATIONS, options)) ??
        withMigrationLock(config, async (connection, lockedOptions) => {
          const applied = await migrate(connection, POSTGRES_MIGRATIONS, 'latest', lockedOptions);
          if (applied.length > 0) await bumpStoreGeneration(connection);
          return applied;
        })
      );
    },
    migrateDown: () =>
      withMigrationLock(config, (connection, options) =>
        migrate(connection, POSTGRES_MIGRATIONS, 'down', options),
      ),
    migrationStatus: () =>
      withMigrationLock(config, (connection, options) =>
        migrationStatus(connection, POSTGRES_MIGRATIONS, options),
      ),
    environment: (claim) => databaseEnvironment(db, claim),
    async ping() {
      // Writes must be possible, not only reads: a server in recovery (a standby after a
      // failover) or a database set read-only answers 25006 here, which also drops that
      // connection from the pool, so that the next one reaches a writable server once there is
      // one. A write that failed as an outage (a full disk) keeps the answer not ready for a while.
      await sql`DO $$ BEGIN
        IF pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on' THEN
          RAISE EXCEPTION USING ERRCODE = 'read_only_sql_transaction',
            MESSAGE = 'the database accepts no writes (read-only or in recovery)';
        END IF;
      END $$`.execute(db);
      writeFailures.throwIfRecent();
    },
    async analyze() {
      await sql`ANALYZE pets`.execute(db);
    },
    async durability() {
      // A commit is durable before it is acknowledged when both are on (the defaults).
      const { rows } = await sql<{ name: string; setting: string }>`
        SELECT name, setting FROM pg_settings
        WHERE name IN ('fsync', 'synchronous_commit') ORDER BY name`.execute(db);
      return Object.fromEntries(rows.map((row) => [row.name, row.setting]));
    },
    async close(options = {}) {
      if (closed) return;
      closed = true;
      const closing = (async () => {
        // Creates still being committed finish first: each was promised a commit or an error.
        await pets.close();
        // Ends the pool: waits for checked-out connections to come back, then closes them all.
        await db.destroy();
      })();
      if (options.deadlineMs === undefined) return closing;
      // The statement timeout answers every write in time; the deadline covers a server that
      // answers nothing at all (the client-side deadline then fails what still waits).
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        closing,
        new Promise((resolve) => {
          timer = setTimeout(resolve, options.deadlineMs);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
