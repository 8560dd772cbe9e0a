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

/** One claim of an Idempotency-Key: a later claim of the same key has a later `createdAt`. */
export type AdminIdempotencyClaimId = Pick<
  AdminIdempotencyRecord,
  'tokenId' | 'keyHash' | 'createdAt'
>;

export interface AdminIdempotencyStore {
  /**
   * Takes the key for a new request unless a record of it exists that was created after
   * `expiredBefore` (then returns it). A record without a response is never taken over before
   * then: its request may have done what it was asked (a create, a roll) and only failed to store
   * the answer, so running it again could make a second key or secret.
   */
  claim(
    record: Omit<AdminIdempotencyRecord, 'response'>,
    expiredBefore: number,
  ): Promise<AdminIdempotencyClaim>;
  /**
   * Stores the response of a claimed request, only into that claim (not a later one that took
   * the key after it expired); says whether it did.
   */
  complete(
    claim: AdminIdempotencyClaimId,
    response: { status: number; sealed: string },
  ): Promise<boolean>;
  /** Frees a claim whose request failed (that claim only), so a retry with the same key runs again. */
  release(claim: AdminIdempotencyClaimId): Promise<void>;
  /** Deletes at most `limit` records created at or before `before`; returns how many. */
  purgeExpired(before: number, limit: number): Promise<number>;
}
