import { type Kysely, type Migration, sql } from 'kysely';
import {
  CACHED_KEY_COLUMNS_BEFORE_SCOPES,
  databaseEnvironmentMigration,
  keyScopesMigration,
  liftedBanMigration,
  keyListingMigration,
  sharedMigrations,
} from '../sql/shared-migrations.js';

/** How this engine spells the shared migrations' column types (MigrationTypes). */
const TYPES = {
  integer: 'INTEGER',
  text: 'TEXT',
  seqPrimaryKey: 'INTEGER PRIMARY KEY AUTOINCREMENT',
};

/** Dated, ordered, each with its way back. Imported statically so src/ and dist/ behave alike. */
export const SQLITE_MIGRATIONS: Record<string, Migration> = {
  '2026-11-22-01-pets': {
    async up(db: Kysely<unknown>) {
      await sql`CREATE TABLE pets (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        category_id INTEGER NOT NULL CHECK (category_id >= 1),
        status TEXT NULL CHECK (status IN ('available', 'pending', 'sold')),
        created_at INTEGER NOT NULL
      )`.execute(db);
      await sql`CREATE INDEX pets_status_id ON pets (status, id)`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await sql`DROP TABLE pets`.execute(db);
    },
  },
  '2026-11-22-02-api-keys': {
    async up(db: Kysely<unknown>) {
      await sql`CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        label TEXT NOT NULL,
        plan TEXT NOT NULL CHECK (plan IN ('free', 'pro', 'business', 'enterprise')),
        per_minute INTEGER NULL,
        per_day INTEGER NULL,
        hash TEXT NOT NULL UNIQUE,
        display_prefix TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_used_at INTEGER NULL,
        revoked_at INTEGER NULL,
        banned_until INTEGER NULL
      )`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await sql`DROP TABLE api_keys`.execute(db);
    },
  },
  '2026-11-22-03-idempotency-keys': {
    async up(db: Kysely<unknown>) {
      await sql`CREATE TABLE idempotency_keys (
        api_key_id TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        pet_id INTEGER NULL REFERENCES pets (id),
        created_at INTEGER NOT NULL,
        locked_at INTEGER NOT NULL,
        PRIMARY KEY (api_key_id, key)
      )`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await sql`DROP TABLE idempotency_keys`.execute(db);
    },
  },
  '2026-11-23-04-api-key-ban-lifted': {
    async up(db: Kysely<unknown>) {
      await sql`ALTER TABLE api_keys ADD COLUMN ban_lifted_at INTEGER NULL`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await sql`ALTER TABLE api_keys DROP COLUMN ban_lifted_at`.execute(db);
    },
  },
  '2026-11-24-05-idempotency-purge': {
    async up(db: Kysely<unknown>) {
      // purgeExpired takes the oldest records in batches.
      await sql`CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at)`.execute(
        db,
      );
    },
    async down(db: Kysely<unknown>) {
      await sql`DROP INDEX idempotency_keys_created_at`.execute(db);
    },
  },
  '2026-11-24-06-api-key-seq': {
    async up(db: Kysely<unknown>) {
      await sql`ALTER TABLE api_keys ADD COLUMN seq INTEGER NULL`.execute(db);
      await sql`UPDATE api_keys SET seq = numbered.n
        FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM api_keys) AS numbered
        WHERE numbered.id = api_keys.id`.execute(db);
      await sql`CREATE UNIQUE INDEX api_keys_seq ON api_keys (seq)`.execute(db);
      // Filled inside the INSERT statement, under SQLite's single write lock, so numbers follow
      // commit order. Keys are never deleted, so max(seq) never goes back and no number is reused.
      // Not rowid: VACUUM may renumber the rowids of a table without an INTEGER PRIMARY KEY.
      await sql`CREATE TRIGGER api_keys_seq AFTER INSERT ON api_keys
        FOR EACH ROW WHEN NEW.seq IS NULL
        BEGIN
          UPDATE api_keys SET seq = (SELECT coalesce(max(seq), 0) + 1 FROM api_keys)
          WHERE id = NEW.id;
        END`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await sql`DROP TRIGGER api_keys_seq`.execute(db);
      await sql`DROP INDEX api_keys_seq`.execute(db);
      await sql`ALTER TABLE api_keys DROP COLUMN seq`.execute(db);
    },
  },
  '2026-11-24-07-api-key-deprecated-calls': {
    async up(db: Kysely<unknown>) {
      // Per key, not per metric label: a label must never take one value per key.
      await sql`ALTER TABLE api_keys ADD COLUMN deprecated_calls INTEGER NOT NULL DEFAULT 0`.execute(
        db,
      );
    },
    async down(db: Kysely<unknown>) {
      await sql`ALTER TABLE api_keys DROP COLUMN deprecated_calls`.execute(db);
    },
  },
  '2026-11-25-08-store-generation': {
    async up(db: Kysely<unknown>) {
      // One row: the counter part of the store generation (src/domain/cache/store-cache.ts).
      await sql`CREATE TABLE store_generation (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        value INTEGER NOT NULL
      )`.execute(db);
      await sql`INSERT INTO store_generation (id, value) VALUES (1, 1)`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await sql`DROP TABLE store_generation`.execute(db);
    },
  },
  ...sharedMigrations(TYPES),
  '2026-12-01-10-api-key-changes': {
    async up(db: Kysely<unknown>) {
      // One row counting changes to what a key cache holds, moved by a trigger on the columns of
      // CACHED_KEY_COLUMNS (src/storage/sql/shared-migrations.ts says why these).
      await sql`CREATE TABLE api_key_changes (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        value INTEGER NOT NULL
      )`.execute(db);
      await sql`INSERT INTO api_key_changes (id, value) VALUES (1, 0)`.execute(db);
      await sql`CREATE TRIGGER api_keys_changed AFTER UPDATE OF ${CACHED_KEY_COLUMNS_BEFORE_SCOPES} ON api_keys
        BEGIN
          UPDATE api_key_changes SET value = value + 1 WHERE id = 1;
        END`.execute(db);
      await sql`CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys
        BEGIN
          UPDATE api_key_changes SET value = value + 1 WHERE id = 1;
        END`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await sql`DROP TRIGGER api_keys_deleted`.execute(db);
      await sql`DROP TRIGGER api_keys_changed`.execute(db);
      await sql`DROP TABLE api_key_changes`.execute(db);
    },
  },
  '2026-12-01-11-lifted-ban': liftedBanMigration(TYPES),
  '2026-12-02-13-key-listing': keyListingMigration,
  '2026-12-02-14-database-environment': databaseEnvironmentMigration(TYPES),
  '2026-12-02-15-key-scopes': keyScopesMigration(TYPES, async (db, columns) => {
    await sql`DROP TRIGGER api_keys_changed`.execute(db);
    await sql`CREATE TRIGGER api_keys_changed AFTER UPDATE OF ${columns} ON api_keys
      BEGIN
        UPDATE api_key_changes SET value = value + 1 WHERE id = 1;
      END`.execute(db);
  }),
};
