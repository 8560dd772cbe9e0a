import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { DAY_MS, MINUTE_MS, type Clock } from '../clock.js';
import { domainErrors } from '../errors.js';
import type { AdminIdempotencyStore } from './admin-token.js';

/** Who asks, with what Idempotency-Key: the admin token (its id and the token itself) and the key. */
export interface AdminIdempotencyScope {
  tokenId: string;
  /** The bearer token as sent: it seals the stored response and is never stored itself. */
  token: string;
  key: string;
}

export interface StoredResponse {
  status: number;
  body: unknown;
}

/**
 * Idempotent admin creates and rolls (draft-ietf-httpapi-idempotency-key-header, as Stripe does):
 * the same Idempotency-Key with the same request, from the same admin token, within 24 hours, gets
 * the first response again (never a second key or secret); with another request, 422
 * `idempotency_key_reused`; while the first still runs, 409 `idempotency_key_in_use`.
 *
 * The first response holds a secret, so it is stored sealed: AES-256-GCM under a key derived
 * (HKDF) from the admin token and the Idempotency-Key, neither of which is stored (the record is
 * found by a hash of the key). Only a request carrying the same token and Idempotency-Key can open
 * it; the database, a backup or a log holds no readable secret. Records are purged after 24 hours.
 */
export class AdminIdempotency {
  static readonly RETENTION_MS = DAY_MS;
  /**
   * A claim with no response this old is not running any more: its request failed to store its
   * answer, or its process died. It may have done what it was asked, so the key stays refused
   * (409, with words saying so) until the record expires, never run again.
   */
  static readonly UNANSWERED_MS = MINUTE_MS;

  constructor(
    private readonly store: AdminIdempotencyStore,
    private readonly clock: Clock,
  ) {}

  async run(
    scope: AdminIdempotencyScope,
    request: unknown,
    operation: () => Promise<StoredResponse>,
  ): Promise<StoredResponse & { replayed: boolean }> {
    const now = this.clock.now();
    const keyHash = createHash('sha256').update(scope.key).digest('hex');
    const claimed = { tokenId: scope.tokenId, keyHash, createdAt: now };
    const claim = await this.store.claim(
      { ...claimed, fingerprint: requestFingerprint(request) },
      now - AdminIdempotency.RETENTION_MS,
    );
    if (claim.kind === 'taken') {
      const { record } = claim;
      if (record.fingerprint !== requestFingerprint(request)) {
        throw domainErrors.idempotencyKeyReused();
      }
      if (record.response === undefined) {
        if (record.createdAt <= now - AdminIdempotency.UNANSWERED_MS) {
          throw domainErrors.idempotencyKeyUnanswered();
        }
        throw domainErrors.idempotencyKeyInUse();
      }
      const body: unknown = JSON.parse(open(scope, record.response.sealed));
      return { status: record.response.status, body, replayed: true };
    }
    let response: StoredResponse;
    try {
      response = await operation();
    } catch (error) {
      // Nothing was done (or it is reported as not done): the same key may be retried.
      await this.store.release(claimed).catch(() => undefined);
      throw error;
    }
    // Done, so answered whatever storing the answer comes to: a response that could not be
    // stored leaves its claim unanswered, and a retry with the key is refused, never run again.
    await this.store
      .complete(claimed, {
        status: response.status,
        sealed: seal(scope, JSON.stringify(response.body)),
      })
      .catch(() => false);
    return { ...response, replayed: false };
  }

  /** Deletes records past retention, in bounded batches; returns how many. */
  async purgeExpired(batch: number, maxBatches: number): Promise<number> {
    const before = this.clock.now() - AdminIdempotency.RETENTION_MS;
    let purged = 0;
    for (let i = 0; i < maxBatches; i++) {
      const deleted = await this.store.purgeExpired(before, batch);
      purged += deleted;
      if (deleted < batch) break;
    }
    return purged;
  }
}

/** Same JSON value, same fingerprint: key order and white space do not matter. */
export function requestFingerprint(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(typeof value === 'bigint' ? value.toString() : value) ?? 'null';
}

const SEAL_INFO = 'petstore admin idempotency v1';

function sealKey(scope: AdminIdempotencyScope): Buffer {
  return Buffer.from(hkdfSync('sha256', scope.token, scope.key, SEAL_INFO, 32));
}

function seal(scope: AdminIdempotencyScope, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey(scope), iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

function open(scope: AdminIdempotencyScope, sealed: string): string {
  const bytes = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', sealKey(scope), bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
}
