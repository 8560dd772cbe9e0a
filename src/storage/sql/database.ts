import type { ColumnType, Generated } from 'kysely';

/**
 * The tables as Kysely sees them, shared by every SQL backend. Integer columns come back as bigint
 * (SQLite with safe integers, PostgreSQL int8 with the pool's own parser); the converters below also
 * take numbers and strings, so reads never depend on how a driver is set up.
 */
type Int = ColumnType<bigint | number | string, bigint | number, bigint | number>;
type NullableInt = ColumnType<
  bigint | number | string | null,
  bigint | number | null,
  bigint | number | null
>;

export interface PetsTable {
  id: ColumnType<bigint | number | string, never, never> & Generated<bigint | number | string>;
  name: string;
  category_id: Int;
  status: string | null;
  created_at: Int;
}

export interface ApiKeysTable {
  id: string;
  label: string;
  plan: string;
  per_minute: NullableInt;
  per_day: NullableInt;
  hash: string;
  display_prefix: string;
  created_at: Int;
  last_used_at: NullableInt;
  revoked_at: NullableInt;
  banned_until: NullableInt;
  ban_lifted_at: NullableInt;
  lifted_ban_until: NullableInt;
  /** Calls to deprecated operations made with the key (flushed in batches by the service). */
  deprecated_calls: ColumnType<
    bigint | number | string,
    bigint | number | undefined,
    bigint | number
  >;
  /**
   * Allocated by the database on insert, increasing (PostgreSQL identity, SQLite trigger): pages
   * through new keys without trusting any host's clock.
   */
  seq: ColumnType<bigint | number | string, never, never>;
  expires_at: NullableInt;
  /** After a roll: the replaced secret's hash, valid until previous_hash_expires_at. */
  previous_hash: string | null;
  previous_hash_expires_at: NullableInt;
  /** A comma list in SCOPES order (src/domain/api-keys/scopes.ts); defaults to every scope. */
  scopes: ColumnType<string, string | undefined, string>;
}

/** Append-only: the service inserts, never updates or deletes. */
export interface KeyAuditTable {
  /** Allocated on insert: the order of records of the same millisecond. */
  seq: ColumnType<bigint | number | string, never, never>;
  id: string;
  key_id: string;
  at: Int;
  action: string;
  /** JSON: { field: { from, to } }, never a secret or a hash. */
  changes: string;
  /** JSON: the Actor. */
  actor: string;
}

export interface KeyUsageTable {
  key_id: string;
  /** YYYY-MM-DD, UTC. */
  day: string;
  admitted: Int;
  refused: Int;
}

export interface IdempotencyKeysTable {
  api_key_id: string;
  key: string;
  fingerprint: string;
  pet_id: NullableInt;
  created_at: Int;
  locked_at: Int;
}

/** The admin API's credentials (src/domain/admin-tokens): hashes, never tokens. */
export interface AdminTokensTable {
  id: string;
  name: string;
  hash: string;
  display_prefix: string;
  created_at: Int;
  last_used_at: NullableInt;
  revoked_at: NullableInt;
}

/** Idempotency-Keys of admin creates and rolls; `sealed` is the response, encrypted. */
export interface AdminIdempotencyTable {
  token_id: string;
  key_hash: string;
  fingerprint: string;
  created_at: Int;
  status: NullableInt;
  sealed: string | null;
}

export interface Database {
  pets: PetsTable;
  api_keys: ApiKeysTable;
  idempotency_keys: IdempotencyKeysTable;
  admin_tokens: AdminTokensTable;
  admin_idempotency: AdminIdempotencyTable;
  key_audit: KeyAuditTable;
  key_usage: KeyUsageTable;
}

export function toNumber(value: bigint | number | string): number {
  return Number(value);
}

export function toOptionalNumber(value: bigint | number | string | null): number | undefined {
  return value === null ? undefined : Number(value);
}

/**
 * Sets on `record` each field whose nullable column holds a value, as a number, in the order
 * given; a NULL column leaves its field absent (records use absent, not null, for "never").
 */
export function setPresentNumbers<T extends object>(
  record: T,
  columns: { [K in keyof T]?: bigint | number | string | null },
): void {
  for (const [field, value] of Object.entries(columns) as [
    string,
    bigint | number | string | null,
  ][]) {
    const number = toOptionalNumber(value);
    if (number !== undefined) (record as Record<string, unknown>)[field] = number;
  }
}

export function toBigInt(value: bigint | number | string): bigint {
  return BigInt(value);
}
