/**
 * Admin tokens: the admin API's credential, a kind of its own beside API keys. A token opens the
 * admin listener only; an API key never does, and a token never opens the pet API. Storage keeps
 * its SHA-256 and display prefix, never the token.
 */
export interface AdminTokenRecord {
  /** Public identifier, e.g. `adm_8Fq2...`: the actor of every admin call in the audit trail. */
  id: string;
  name: string;
  /** Hex SHA-256 of the full token. */
  hash: string;
  /** First 12 characters of the token, for people to recognise it. */
  displayPrefix: string;
  createdAt: number;
  /** Coarse: written at most once a minute per token and instance. */
  lastUsedAt?: number;
  revokedAt?: number;
}

export type NewAdminTokenRecord = Omit<AdminTokenRecord, 'lastUsedAt' | 'revokedAt'>;

export interface AdminTokenStore {
  insert(record: NewAdminTokenRecord): Promise<AdminTokenRecord>;
  findByHash(hash: string): Promise<AdminTokenRecord | undefined>;
  /** Oldest first. */
  list(): Promise<AdminTokenRecord[]>;
  /** Returns false when no such token exists. Revoking twice keeps the first timestamp. */
  revoke(id: string, at: number): Promise<boolean>;
  touch(id: string, at: number): Promise<void>;
}

/**
 * One admin request sent with an Idempotency-Key, as stored: the caller (admin token id), a hash
 * of the Idempotency-Key, a fingerprint of the request, and the response once it is known, sealed
 * (see admin-idempotency.ts) because the response of a create or roll holds a secret.
 */
export interface AdminIdempotencyRecord {
  tokenId: string;
  keyHash: string;
  fingerprint: string;
  createdAt: number;
  /** Absent while the first request is still running. */
  response?: { status: number; sealed: string };
}

export type AdminIdempotencyClaim =
  | { kind: 'claimed' }
  /** The key is held by a record younger than the retention (finished or still running). */
  | { kind: 'taken'; record: AdminIdempotencyRecord };

export interface AdminIdempotencyStore {
  /**
   * Takes the key for a new request unless a record of it exists that was created after
   * `expiredBefore` (then returns it); a record held without a response since `abandonedBefore`
   * (its process died mid-request) may be taken over.
   */
  claim(
    record: Omit<AdminIdempotencyRecord, 'response'>,
    expiredBefore: number,
    abandonedBefore: number,
  ): Promise<AdminIdempotencyClaim>;
  /** Stores the response of a claimed request. */
  complete(
    tokenId: string,
    keyHash: string,
    response: { status: number; sealed: string },
  ): Promise<void>;
  /** Frees a claim whose request failed, so a retry with the same key runs again. */
  release(tokenId: string, keyHash: string): Promise<void>;
  /** Deletes at most `limit` records created at or before `before`; returns how many. */
  purgeExpired(before: number, limit: number): Promise<number>;
}
