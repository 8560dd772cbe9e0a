import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Dated, ordered, each with its way back; the same names and order as SQLITE_MIGRATIONS where they
 * mean the same. Every integer is int8 (bigint), read back as a JS bigint by the pool's parser.
 * Kysely runs each batch in one transaction, so a failed migration leaves nothing half done.
 * Kept apart from SQLITE_MIGRATIONS although many read alike: the column types (bigint vs
 * INTEGER), identity columns (GENERATED ALWAYS vs AUTOINCREMENT) and checks differ per dialect,
 * and an applied migration's SQL must not change, so one builder for both would only move the
 * differences into parameters.
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
      // One row: the counter part of the store generation (src/domain/pets/store-copies.ts).
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
  '2026-12-01-08-key-life': {
    async up(db: Kysely<unknown>) {
      await sql`ALTER TABLE api_keys ADD COLUMN expires_at bigint NULL`.execute(db);
      await sql`ALTER TABLE api_keys ADD COLUMN previous_hash text NULL`.execute(db);
      await sql`ALTER TABLE api_keys ADD COLUMN previous_hash_expires_at bigint NULL`.execute(db);
      // Lookups by either secret's hash; a hash is current or previous of at most one key.
      await sql`CREATE UNIQUE INDEX api_keys_previous_hash ON api_keys (previous_hash)`.execute(db);
      // The background sweep that records the end of bans.
      await sql`CREATE INDEX api_keys_banned_until ON api_keys (banned_until)`.execute(db);
      // seq orders records appended in the same millisecond as they were appended.
      await sql`CREATE TABLE key_audit (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text NOT NULL UNIQUE,
        key_id text NOT NULL,
        at bigint NOT NULL,
        action text NOT NULL,
        changes text NOT NULL,
        actor text NOT NULL
      )`.execute(db);
      await sql`CREATE INDEX key_audit_key_at ON key_audit (key_id, at)`.execute(db);
      await sql`CREATE INDEX key_audit_at ON key_audit (at)`.execute(db);
      await sql`CREATE TABLE key_usage (
        key_id text NOT NULL,
        day text NOT NULL,
        admitted bigint NOT NULL,
        refused bigint NOT NULL,
        PRIMARY KEY (key_id, day)
      )`.execute(db);
      await sql`CREATE INDEX key_usage_day ON key_usage (day)`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await sql`DROP TABLE key_usage`.execute(db);
      await sql`DROP TABLE key_audit`.execute(db);
      await sql`DROP INDEX api_keys_banned_until`.execute(db);
      await sql`DROP INDEX api_keys_previous_hash`.execute(db);
      await sql`ALTER TABLE api_keys DROP COLUMN previous_hash_expires_at`.execute(db);
      await sql`ALTER TABLE api_keys DROP COLUMN previous_hash`.execute(db);
      await sql`ALTER TABLE api_keys DROP COLUMN expires_at`.execute(db);
    },
  },
  '2026-12-01-09-admin-tokens': {
    async up(db: Kysely<unknown>) {
      await sql`CREATE TABLE admin_tokens (
        id text PRIMARY KEY,
        name text NOT NULL,
        hash text NOT NULL UNIQUE,
        display_prefix text NOT NULL,
        created_at bigint NOT NULL,
        last_used_at bigint NULL,
        revoked_at bigint NULL
      )`.execute(db);
      await sql`CREATE TABLE admin_idempotency (
        token_id text NOT NULL,
        key_hash text NOT NULL,
        fingerprint text NOT NULL,
        created_at bigint NOT NULL,
        status bigint NULL,
        sealed text NULL,
        PRIMARY KEY (token_id, key_hash)
      )`.execute(db);
      await sql`CREATE INDEX admin_idempotency_created_at ON admin_idempotency (created_at)`.execute(
        db,
      );
    },
    async down(db: Kysely<unknown>) {
      await sql`DROP TABLE admin_idempotency`.execute(db);
      await sql`DROP TABLE admin_tokens`.execute(db);
    },
  },
};
