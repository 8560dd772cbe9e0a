import { ApiKeyService } from '../api-keys/api-key-service.js';
import {
  ADMIN_TOKEN_PREFIX,
  displayPrefix,
  generateToken,
  hashApiKey,
  isWellFormedToken,
  randomBase62,
} from '../api-keys/key-format.js';
import type { Clock } from '../clock.js';
import type { AdminTokenRecord, AdminTokenStore } from './admin-token.js';

/** Why a token is refused; `not_looked_up`: the caller's gate said no before storage was read. */
export type AdminTokenRefusal = 'missing' | 'malformed' | 'unknown' | 'revoked' | 'not_looked_up';

export type AdminAuthResult =
  { ok: true; token: AdminTokenRecord } | { ok: false; reason: AdminTokenRefusal };

interface CacheEntry {
  record: AdminTokenRecord;
  expiresAt: number;
}

/**
 * Issues, lists and revokes admin tokens and verifies them. Found tokens are cached for the API
 * key cache's lifetime (4 s): a revoked token is refused by every instance within that, with no
 * notification needed (admin calls are few; a lookup per 4 s per token costs nothing).
 */
export class AdminTokenService {
  static readonly CACHE_TTL_MS = ApiKeyService.CACHE_TTL_MS;
  static readonly TOUCH_INTERVAL_MS = ApiKeyService.TOUCH_INTERVAL_MS;
  /** Admin tokens are few; past this many cached, the oldest entry goes. */
  private static readonly CACHE_MAX_ENTRIES = 1_000;
  private readonly cache = new Map<string, CacheEntry>();
  private readonly lastTouched = new Map<string, number>();

  constructor(
    private readonly store: AdminTokenStore,
    private readonly clock: Clock,
  ) {}

  /** A new token; the token itself is returned here once and stored only as its hash. */
  async create(name: string): Promise<{ record: AdminTokenRecord; token: string }> {
    const token = generateToken(ADMIN_TOKEN_PREFIX);
    const record = await this.store.insert({
      id: `adm_${randomBase62(16)}`,
      name,
      hash: hashApiKey(token),
      displayPrefix: displayPrefix(token),
      createdAt: this.clock.now(),
    });
    return { record, token };
  }

  list(): Promise<AdminTokenRecord[]> {
    return this.store.list();
  }

  /** Returns false when no such token exists. Every instance refuses it within CACHE_TTL_MS. */
  async revoke(id: string): Promise<boolean> {
    const found = await this.store.revoke(id, this.clock.now());
    for (const [hash, entry] of this.cache) if (entry.record.id === id) this.cache.delete(hash);
    return found;
  }

  /**
   * Verifies the token of an `Authorization: Bearer` header. `gate` is asked before storage is read
   * for a token not seen valid lately: when it refuses, storage is not read at all.
   */
  async authenticate(
    token: string | undefined,
    gate: () => Promise<boolean>,
  ): Promise<AdminAuthResult> {
    if (token === undefined || token === '') return { ok: false, reason: 'missing' };
    // Format and checksum first: made-up tokens (and API keys) never reach the cache or storage.
    if (!isWellFormedToken(token, ADMIN_TOKEN_PREFIX)) return { ok: false, reason: 'malformed' };
    const now = this.clock.now();
    // Cached by its SHA-256, as storage keeps it: memory holds no token in clear.
    const hash = hashApiKey(token);
    const entry = this.cache.get(hash);
    let record = entry !== undefined && entry.expiresAt > now ? entry.record : undefined;
    if (record === undefined) {
      const known = entry !== undefined && entry.record.revokedAt === undefined;
      if (!known && !(await gate())) return { ok: false, reason: 'not_looked_up' };
      record = await this.store.findByHash(hash);
      if (record === undefined) {
        this.cache.delete(hash);
        return { ok: false, reason: 'unknown' };
      }
      this.remember(hash, record, now);
    }
    if (record.revokedAt !== undefined) return { ok: false, reason: 'revoked' };
    this.touch(record.id, now);
    return { ok: true, token: record };
  }

  private remember(hash: string, record: AdminTokenRecord, now: number): void {
    this.cache.delete(hash);
    if (this.cache.size >= AdminTokenService.CACHE_MAX_ENTRIES) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(hash, { record, expiresAt: now + AdminTokenService.CACHE_TTL_MS });
  }

  /** Last-used, coarse on purpose: one write per token per interval, never one per request. */
  private touch(id: string, now: number): void {
    const last = this.lastTouched.get(id);
    if (last !== undefined && now - last < AdminTokenService.TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(id, now);
    this.store.touch(id, now).catch(() => {
      this.lastTouched.delete(id);
    });
  }
}
