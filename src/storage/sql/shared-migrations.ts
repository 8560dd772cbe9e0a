import { type Kysely, type Migration, type RawBuilder, sql } from 'kysely';

/**
 * How one engine spells the column types of the migrations both engines share. Only the spelling
 * differs: every integer holds a JavaScript-safe number on both, and `seq` orders rows by insertion.
 */
export interface MigrationTypes {
  /** bigint on PostgreSQL (read back as a bigint), INTEGER on SQLite. */
  integer: string;
  text: string;
  /** An insertion-ordered primary key: an identity on PostgreSQL, AUTOINCREMENT on SQLite. */
  seqPrimaryKey: string;
}

/**
 * The api_keys columns a key cache carries (src/domain/api-keys/api-key-service.ts): a trigger on
 * each engine moves the api_key_changes row whenever one of them changes, whoever writes it (the
 * CLI, the admin API, an UPDATE typed by hand), and every instance reads that row once a second
 * with the store generation. Not the bookkeeping written as keys are used (last_used_at,
 * deprecated_calls, seq), nor banned_until: the rate-limit store enforces a ban, and a lift moves
 * ban_lifted_at. A column added to api_keys later that a cache must see belongs here, in a new
 * migration that recreates the triggers.
 */
const CACHED_BEFORE_SCOPES =
  'label, plan, per_minute, per_day, hash, revoked_at, ban_lifted_at, expires_at, previous_hash, previous_hash_expires_at';
/** The columns as 2026-12-01-10-api-key-changes watched them, before scopes existed. */
export const CACHED_KEY_COLUMNS_BEFORE_SCOPES = sql.raw(CACHED_BEFORE_SCOPES);
/** The columns watched from 2026-12-02-15-key-scopes on. */
export const CACHED_KEY_COLUMNS = sql.raw(`${CACHED_BEFORE_SCOPES}, scopes`);

/**
 * The migrations from key life on: the same tables on both engines, so written once. (The earlier
 * ones stay in each engine's file as they were applied: their checks and identities differ.)
 */
export function sharedMigrations(types: MigrationTypes): Record<string, Migration> {
  const int = sql.raw(types.integer);
  const text = sql.raw(types.text);
  return {
    '2026-12-01-08-key-life': {
      async up(db: Kysely<unknown>) {
        await sql`ALTER TABLE api_keys ADD COLUMN expires_at ${int} NULL`.execute(db);
        await sql`ALTER TABLE api_keys ADD COLUMN previous_hash ${text} NULL`.execute(db);
        await sql`ALTER TABLE api_keys ADD COLUMN previous_hash_expires_at ${int} NULL`.execute(db);
        // Lookups by either secret's hash; a hash is current or previous of at most one key.
        await sql`CREATE UNIQUE INDEX api_keys_previous_hash ON api_keys (previous_hash)`.execute(
          db,
        );
        // The background sweep that records the end of bans.
        await sql`CREATE INDEX api_keys_banned_until ON api_keys (banned_until)`.execute(db);
        // seq orders records appended in the same millisecond as they were appended.
        await sql`CREATE TABLE key_audit (
          seq ${sql.raw(types.seqPrimaryKey)},
          id ${text} NOT NULL UNIQUE,
          key_id ${text} NOT NULL,
          at ${int} NOT NULL,
          action ${text} NOT NULL,
          changes ${text} NOT NULL,
          actor ${text} NOT NULL
        )`.execute(db);
        await sql`CREATE INDEX key_audit_key_at ON key_audit (key_id, at)`.execute(db);
        await sql`CREATE INDEX key_audit_at ON key_audit (at)`.execute(db);
        await sql`CREATE TABLE key_usage (
          key_id ${text} NOT NULL,
          day ${text} NOT NULL,
          admitted ${int} NOT NULL,
          refused ${int} NOT NULL,
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
          id ${text} PRIMARY KEY,
          name ${text} NOT NULL,
          hash ${text} NOT NULL UNIQUE,
          display_prefix ${text} NOT NULL,
          created_at ${int} NOT NULL,
          last_used_at ${int} NULL,
          revoked_at ${int} NULL
        )`.execute(db);
        await sql`CREATE TABLE admin_idempotency (
          token_id ${text} NOT NULL,
          key_hash ${text} NOT NULL,
          fingerprint ${text} NOT NULL,
          created_at ${int} NOT NULL,
          status ${int} NULL,
          sealed ${text} NULL,
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
}

/**
 * Which ban a `keys unban` lifted, by its end on the rate-limit store's clock (ApiKeyRecord,
 * liftedBanUntil). Written with ban_lifted_at, so the key-change trigger already fires. After
 * 2026-12-01-10 on both engines, hence not in sharedMigrations.
 */
export function liftedBanMigration(types: MigrationTypes): Migration {
  const int = sql.raw(types.integer);
  return {
    async up(db: Kysely<unknown>) {
      await sql`ALTER TABLE api_keys ADD COLUMN lifted_ban_until ${int} NULL`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await sql`ALTER TABLE api_keys DROP COLUMN lifted_ban_until`.execute(db);
    },
  };
}

/**
 * What each key may do (src/domain/api-keys/scopes.ts): a comma list, every scope by default, so
 * a key made before scopes keeps doing all it did. The column is one a key cache carries, so the
 * engine's key-change trigger is made again to watch it (`recreateTrigger`, the engine's own):
 * a scope change reaches every instance as a plan change does.
 */
export function keyScopesMigration(
  types: MigrationTypes,
  recreateTrigger: (db: Kysely<unknown>, columns: RawBuilder<unknown>) => Promise<void>,
): Migration {
  const text = sql.raw(types.text);
  return {
    async up(db: Kysely<unknown>) {
      await sql`ALTER TABLE api_keys ADD COLUMN scopes ${text} NOT NULL DEFAULT 'pets:read,pets:write'`.execute(
        db,
      );
      await recreateTrigger(db, CACHED_KEY_COLUMNS);
    },
    async down(db: Kysely<unknown>) {
      await recreateTrigger(db, CACHED_KEY_COLUMNS_BEFORE_SCOPES);
      await sql`ALTER TABLE api_keys DROP COLUMN scopes`.execute(db);
    },
  };
}

/**
 * The orders the key listing (GET /admin/v1/keys, the console) walks, each ending in id so that a
 * keyset position is unique: a page is read from the index, not by sorting every key. The
 * expression is spelled as the store's query spells it (SqlApiKeyStore.page).
 */
export const keyListingMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`CREATE INDEX api_keys_created ON api_keys (created_at, id)`.execute(db);
    await sql`CREATE INDEX api_keys_label ON api_keys (label, id)`.execute(db);
    await sql`CREATE INDEX api_keys_last_used ON api_keys ((coalesce(last_used_at, 0)), id)`.execute(
      db,
    );
  },
  async down(db: Kysely<unknown>) {
    await sql`DROP INDEX api_keys_last_used`.execute(db);
    await sql`DROP INDEX api_keys_label`.execute(db);
    await sql`DROP INDEX api_keys_created`.execute(db);
  },
};

/**
 * The database's own settings, one row per name. The first: `environment`, the PETSTORE_ENV the
 * database belongs to, written by the first server or CLI that opens it after this migration and
 * compared by every later one (src/storage/sql/database-environment.ts). Not written here: the
 * migration does not know the environment, and a migrate run without PETSTORE_ENV must not
 * claim a staging database for production.
 */
export function databaseEnvironmentMigration(types: MigrationTypes): Migration {
  const text = sql.raw(types.text);
  return {
    async up(db: Kysely<unknown>) {
      await sql`CREATE TABLE settings (
        name ${text} PRIMARY KEY,
        value ${text} NOT NULL
      )`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await sql`DROP TABLE settings`.execute(db);
    },
  };
}
