import { type Kysely, type Migration, sql } from 'kysely';

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
      // One row: the counter part of the store generation (src/domain/pets/store-copies.ts).
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
  '2026-12-01-08-key-life': {
    async up(db: Kysely<unknown>) {
      await sql`ALTER TABLE api_keys ADD COLUMN expires_at INTEGER NULL`.execute(db);
      await sql`ALTER TABLE api_keys ADD COLUMN previous_hash TEXT NULL`.execute(db);
      await sql`ALTER TABLE api_keys ADD COLUMN previous_hash_expires_at INTEGER NULL`.execute(db);
      // Lookups by either secret's hash; a hash is current or previous of at most one key.
      await sql`CREATE UNIQUE INDEX api_keys_previous_hash ON api_keys (previous_hash)`.execute(db);
      // The background sweep that records the end of bans.
      await sql`CREATE INDEX api_keys_banned_until ON api_keys (banned_until)`.execute(db);
      // seq orders records appended in the same millisecond as they were appended.
      await sql`CREATE TABLE key_audit (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        key_id TEXT NOT NULL,
        at INTEGER NOT NULL,
        action TEXT NOT NULL,
        changes TEXT NOT NULL,
        actor TEXT NOT NULL
      )`.execute(db);
      await sql`CREATE INDEX key_audit_key_at ON key_audit (key_id, at)`.execute(db);
      await sql`CREATE INDEX key_audit_at ON key_audit (at)`.execute(db);
      await sql`CREATE TABLE key_usage (
        key_id TEXT NOT NULL,
        day TEXT NOT NULL,
        admitted INTEGER NOT NULL,
        refused INTEGER NOT NULL,
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
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE,
        display_prefix TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_used_at INTEGER NULL,
        revoked_at INTEGER NULL
      )`.execute(db);
      await sql`CREATE TABLE admin_idempotency (
        token_id TEXT NOT NULL,
        key_hash TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        status INTEGER NULL,
        sealed TEXT NULL,
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
