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
  integer: 'bigint',
  text: 'text',
  seqPrimaryKey: 'bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY',
};

/**
 * Dated, ordered, each with its way back; the same names and order as SQLITE_MIGRATIONS where they
 * mean the same. Every integer is int8 (bigint), read back as a JS bigint by the pool's parser.
 * Kysely runs each batch in one transaction, so a failed migration leaves nothing half done.
 * The first ones are kept apart from SQLITE_MIGRATIONS as they were applied: their identity columns
 * (GENERATED ALWAYS vs AUTOINCREMENT) and checks differ per dialect. Later ones that differ only in
 * how types are spelled are written once (src/storage/sql/shared-migrations.ts).
 */
export const POSTGRES_MIGRATIONS: Record<string, Migration> = {
  '2026-11-22-01-pets': {
    async up(db: Kysely<unknown>) {
      // MAXVALUE 2^53 - 1: past it the insert fails, so every id stays exact in JavaScript.
      // ALWAYS: no statement can place an id of its own in the sequence's way.
      await sql`CREATE TABLE pets (
        id bigint GENERATED ALWAYS AS IDENTITY (MAXVALUE 9007199254740991) PRIMARY KEY,
        name text NOT NULL,
        category_id bigint NOT NULL CHECK (category_id >= 1),
        status text NULL CHECK (status IN ('available', 'pending', 'sold')),
        created_at bigint NOT NULL
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
        id text PRIMARY KEY,
        label text NOT NULL,
        plan text NOT NULL CHECK (plan IN ('free', 'pro', 'business', 'enterprise')),
        per_minute bigint NULL,
        per_day bigint NULL,
        hash text NOT NULL UNIQUE,
        display_prefix text NOT NULL,
        created_at bigint NOT NULL,
        last_used_at bigint NULL,
        revoked_at bigint NULL,
        banned_until bigint NULL
      )`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await sql`DROP TABLE api_keys`.execute(db);
    },
  },
  '2026-11-22-03-idempotency-keys': {
    async up(db: Kysely<unknown>) {
      await sql`CREATE TABLE idempotency_keys (
        api_key_id text NOT NULL,
        key text NOT NULL,
        fingerprint text NOT NULL,
        pet_id bigint NULL REFERENCES pets (id),
        created_at bigint NOT NULL,
        locked_at bigint NOT NULL,
        PRIMARY KEY (api_key_id, key)
      )`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await sql`DROP TABLE idempotency_keys`.execute(db);
    },
  },
  '2026-11-23-04-api-key-ban-lifted': {
    async up(db: Kysely<unknown>) {
      await sql`ALTER TABLE api_keys ADD COLUMN ban_lifted_at bigint NULL`.execute(db);
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
      // Existing keys are numbered in creation order first; the identity then continues after them.
      await sql`ALTER TABLE api_keys ADD COLUMN seq bigint NULL`.execute(db);
      await sql`UPDATE api_keys SET seq = numbered.n
        FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM api_keys) AS numbered
        WHERE numbered.id = api_keys.id`.execute(db);
      await sql`ALTER TABLE api_keys ALTER COLUMN seq SET NOT NULL`.execute(db);
      await sql`ALTER TABLE api_keys ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY`.execute(db);
      await sql`SELECT setval(
        pg_get_serial_sequence('api_keys', 'seq'),
        (SELECT coalesce(max(seq), 0) + 1 FROM api_keys),
        false
      )`.execute(db);
      await sql`CREATE UNIQUE INDEX api_keys_seq ON api_keys (seq)`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await sql`ALTER TABLE api_keys DROP COLUMN seq`.execute(db);
    },
  },
  '2026-11-24-07-api-key-deprecated-calls': {
    async up(db: Kysely<unknown>) {
      // Per key, not per metric label: a label must never take one value per key.
      await sql`ALTER TABLE api_keys ADD COLUMN deprecated_calls bigint NOT NULL DEFAULT 0`.execute(
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
        id smallint PRIMARY KEY CHECK (id = 1),
        value bigint NOT NULL
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
        id smallint PRIMARY KEY CHECK (id = 1),
        value bigint NOT NULL
      )`.execute(db);
      await sql`INSERT INTO api_key_changes (id, value) VALUES (1, 0)`.execute(db);
      await sql`CREATE FUNCTION api_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          UPDATE api_key_changes SET value = value + 1 WHERE id = 1;
          RETURN NULL;
        END $$`.execute(db);
      await sql`CREATE TRIGGER api_keys_changed
        AFTER UPDATE OF ${CACHED_KEY_COLUMNS_BEFORE_SCOPES} OR DELETE ON api_keys
        FOR EACH STATEMENT EXECUTE FUNCTION api_keys_changed()`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await sql`DROP TRIGGER api_keys_changed ON api_keys`.execute(db);
      await sql`DROP FUNCTION api_keys_changed()`.execute(db);
      await sql`DROP TABLE api_key_changes`.execute(db);
    },
  },
  '2026-12-01-11-lifted-ban': liftedBanMigration(TYPES),
  '2026-12-02-13-key-listing': keyListingMigration,
  '2026-12-02-14-database-environment': databaseEnvironmentMigration(TYPES),
  '2026-12-02-15-key-scopes': keyScopesMigration(TYPES, async (db, columns) => {
    await sql`DROP TRIGGER api_keys_changed ON api_keys`.execute(db);
    await sql`CREATE TRIGGER api_keys_changed
      AFTER UPDATE OF ${columns} OR DELETE ON api_keys
      FOR EACH STATEMENT EXECUTE FUNCTION api_keys_changed()`.execute(db);
  }),
};
