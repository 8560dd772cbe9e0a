import { type Clock, MINUTE_MS } from '../clock.js';
import { ALL_SCOPES, type Scope } from './scopes.js';
import type { ApiKeyStore, KeyChangeNotifier } from '../ports.js';
import type { Limits, Plan } from '../rate-limits/plans.js';
import { customLimitsProblem, PLAN_LIMITS } from '../rate-limits/plans.js';
import type { ApiKeyRecord, KeyEnvironment, NewApiKeyRecord } from './api-key.js';
import {
  type AuditLog,
  type AuditRecord,
  copyToAuditLog,
  newAuditId,
  SYSTEM_ACTOR,
} from './key-audit.js';
import type { SyncOrAsync } from '../sync-or-async.js';
import { KnownKeyHashes } from './known-key-hashes.js';
import {
  API_KEY_LENGTH,
  displayPrefix,
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  newApiKeyId,
} from './key-format.js';

/** Why a credential is not a valid key. */
export type KeyRefusalReason = 'missing' | 'malformed' | 'unknown' | 'revoked' | 'expired';

export type AuthResult =
  | { ok: true; key: ApiKeyRecord }
  | { ok: false; reason: Exclude<KeyRefusalReason, 'expired'> }
  /** A real key past its expiry, or a rolled key's old secret past its grace end. */
  | { ok: false; reason: 'expired'; key: ApiKeyRecord }
  /** The gate refused a storage lookup (the caller's address is over its budget). */
  | { ok: false; reason: 'not_looked_up' };

/** Asked before reading storage for a key this instance has not seen valid lately. */
export type LookupGate = () => Promise<boolean>;

export interface CreatedApiKey {
  record: ApiKeyRecord;
  /** The plaintext key: shown to its owner once, never stored. */
  key: string;
}

interface CacheEntry {
  record: ApiKeyRecord;
  /** When it was read from storage. */
  loadedAt: number;
  /** The service's countMoves when it was read: a move of the key change count since makes it stale. */
  countMoves: number;
  /** Set when the token is the key's previous secret (after a roll): its grace end. */
  secretEndsAt?: number;
}

/** When the credential stops working: the key's expiry, or sooner the old secret's grace end. */
function endOf(record: ApiKeyRecord, secretEndsAt: number | undefined): number {
  return Math.min(record.expiresAt ?? Infinity, secretEndsAt ?? Infinity);
}

/**
 * Issues keys and verifies bearer tokens. Verification keeps found keys in a cache, so the hot path
 * rarely touches storage. An entry is fresh for CACHE_TTL_MS after it was read, or after the
 * latest read of the key change count that found nothing changed (keysRead: a serving instance
 * reads it once a second), and never longer than MAX_CACHED_MS. Either way a change to a key is
 * seen on every instance within CACHE_TTL_MS and a second (the decisions promise 5 seconds), and a
 * key used now and then costs a lookup every MAX_CACHED_MS, not every CACHE_TTL_MS. Stale entries
 * stay until evicted, as proof that a key was valid lately.
 */
export class ApiKeyService {
  static readonly CACHE_TTL_MS = 4_000;
  /** The longest a cached key is trusted while the key change count confirms it. */
  static readonly MAX_CACHED_MS = 5 * MINUTE_MS;
  static readonly TOUCH_INTERVAL_MS = MINUTE_MS;
  private static readonly CACHE_MAX_ENTRIES = 10_000;

  /** Deprecated calls counted since the last flush, by key id (valid keys only: bounded). */
  private pendingDeprecated = new Map<string, number>();
  private lastDeprecatedFlush: number | undefined;
  private flushing: Promise<void> | undefined;

  /** By token: the keys seen valid lately (the process holds them in requests anyway). */
  private readonly cache = new Map<string, CacheEntry>();
  /** When the latest read of the key change count that found no change started. */
  private confirmedAt = -Infinity;
  /** Moved by every drop: a lookup that started before one may have read the old key. */
  private epoch = 0;
  /** Moves of the key change count seen: entries read before the latest are stale. */
  private countMoves = 0;
  private readonly lastTouched = new Map<string, number>();
  private known: KnownKeyHashes;

  constructor(
    private readonly store: ApiKeyStore,
    private readonly clock: Clock,
    private readonly environment: KeyEnvironment,
    /** Tells other instances at once of a revoked or unbanned key; their cache is the fallback. */
    private readonly changes?: KeyChangeNotifier,
    /** Each ban recorded is also written here (a log line outside the database). */
    private readonly auditLog?: AuditLog,
  ) {
    this.known = new KnownKeyHashes(store);
  }

  /**
   * Entries of each in-memory structure, for tests and diagnostics: each must stay bounded by the
   * keys that exist (or a fixed cap), whatever tokens clients send.
   */
  get footprint(): {
    cache: number;
    lastTouched: number;
    knownPrefixes: number;
    pendingDeprecated: number;
  } {
    return {
      cache: this.cache.size,
      lastTouched: this.lastTouched.size,
      knownPrefixes: this.known.size,
      pendingDeprecated: this.pendingDeprecated.size,
    };
  }

  /** From now on, drops a key from this instance's cache as soon as any instance changes it. */
  listenForChanges(): Promise<void> {
    return this.changes?.subscribe((id) => this.forget(id)) ?? Promise.resolve();
  }

  /**
   * Mints and stores a key. KeyManagementService.create is the operation callers use (it
   * validates, and audits with `audit`); tests use this to set up keys.
   */
  async create(
    input: {
      plan: Plan;
      label?: string;
      customLimits?: Limits;
      expiresAt?: number;
      /** Every scope when absent. */
      scopes?: readonly Scope[];
    },
    audit?: (record: NewApiKeyRecord) => AuditRecord,
  ): Promise<CreatedApiKey> {
    // Callers check this first (the CLI words it for its flags); here it guards the stored data.
    const problem = customLimitsProblem(input.plan, input.customLimits ?? {});
    if (problem !== undefined) throw new Error(`cannot create a ${input.plan} key: ${problem}`);
    const { record: fresh, key } = this.newKey(input);
    const record = await this.store.insert(fresh, audit?.(fresh));
    this.known.add(record.hash);
    return { record, key };
  }

  /** A new secret: the plaintext, shown once, and what storage keeps of it. */
  newSecret(): { key: string; hash: string; displayPrefix: string } {
    const key = generateApiKey(this.environment);
    return { key, hash: hashApiKey(key), displayPrefix: displayPrefix(key) };
  }

  /** A key this process made or rolled: known at once to the gate of unknown keys. */
  knowHash(hash: string): void {
    this.known.add(hash);
  }

  private newKey(input: {
    plan: Plan;
    label?: string;
    customLimits?: Limits;
    expiresAt?: number;
    scopes?: readonly Scope[];
  }) {
    const key = generateApiKey(this.environment);
    const record: NewApiKeyRecord = {
      id: newApiKeyId(),
      label: input.label ?? '',
      plan: input.plan,
      ...(input.customLimits ? { customLimits: input.customLimits } : {}),
      ...(input.expiresAt !== undefined ? { expiresAt: input.expiresAt } : {}),
      scopes: input.scopes ?? ALL_SCOPES,
      hash: hashApiKey(key),
      displayPrefix: displayPrefix(key),
      createdAt: this.clock.now(),
    };
    return { record, key };
  }

  /**
   * On a store with no key at all, creates one free-plan key so that a newcomer can call the API at
   * once; otherwise does nothing and resolves undefined. Atomic in storage: of several instances
   * starting together on an empty database, exactly one creates it.
   */
  async ensureFirstKey(): Promise<CreatedApiKey | undefined> {
    const { record, key } = this.newKey({ plan: 'free', label: 'first start' });
    const audit: AuditRecord = {
      id: newAuditId(),
      at: record.createdAt,
      keyId: record.id,
      action: 'create',
      changes: { plan: { from: null, to: 'free' }, name: { from: null, to: record.label } },
      actor: SYSTEM_ACTOR,
    };
    if (!(await this.store.insertIfNone(record, audit))) return undefined;
    this.known.add(record.hash);
    return { record: { ...record, deprecatedCalls: 0 }, key };
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.store.list();
  }

  count(): Promise<number> {
    return this.store.count();
  }

  /**
   * Tells the other instances the key changed, so they drop it from their caches. Best effort:
   * the change is stored, and every cache expires within CACHE_TTL_MS anyway.
   */
  async announce(id: string): Promise<void> {
    await this.changes?.publish(id).catch(() => undefined);
  }

  /**
   * Keeps a ban the rate limiter started, so it outlives a restart and shows in `keys list`;
   * audited as the system's doing, in the same transaction.
   */
  async recordBan(key: ApiKeyRecord, until: number): Promise<boolean> {
    const now = this.clock.now();
    const audit: AuditRecord = {
      id: newAuditId(),
      at: now,
      keyId: key.id,
      action: 'ban',
      changes: {
        bannedUntil: {
          from: key.bannedUntil === undefined ? null : new Date(key.bannedUntil).toISOString(),
          to: new Date(until).toISOString(),
        },
      },
      actor: SYSTEM_ACTOR,
    };
    const recorded = await this.store.setBannedUntil(key.id, until, audit);
    if (recorded) copyToAuditLog(this.auditLog, audit);
    return recorded;
  }

  /** Forgets every cached key (the store generation changed: src/domain/cache/store-cache.ts). */
  dropCachedKeys(): void {
    this.epoch += 1;
    this.cache.clear();
    // A restore may hand out sequence numbers again, which an incremental load would skip.
    this.known = new KnownKeyHashes(this.store);
  }

  /**
   * A read of the key change count (src/domain/cache/store-cache.ts, onKeysRead): when it moved,
   * every cached key goes stale; when it did not, every cached key was as stored at `startedAt`.
   */
  keysRead(read: { startedAt: number; changed: boolean }): void {
    if (read.changed) {
      // Stale, not gone: a stale entry of a valid key still spares its next lookup the gate.
      this.countMoves += 1;
      this.epoch += 1;
    }
    this.confirmedAt = Math.max(this.confirmedAt, read.startedAt);
  }

  /** Drops the key from this instance's cache: the next request reads it from storage. */
  forget(id: string): void {
    this.epoch += 1;
    for (const [hash, entry] of this.cache) if (entry.record.id === id) this.cache.delete(hash);
  }

  private fresh(entry: CacheEntry, now: number): boolean {
    return (
      entry.countMoves === this.countMoves &&
      now - Math.max(entry.loadedAt, this.confirmedAt) < ApiKeyService.CACHE_TTL_MS &&
      now - entry.loadedAt < ApiKeyService.MAX_CACHED_MS
    );
  }

  /** The rate limits in force for a key: its plan's, or its own for enterprise. */
  static limitsOf(record: ApiKeyRecord): Limits {
    if (record.plan === 'enterprise') {
      if (!record.customLimits) throw new Error(`enterprise key ${record.id} has no limits`);
      return record.customLimits;
    }
    return PLAN_LIMITS[record.plan];
  }

  /**
   * Verifies the token of an `Authorization: Bearer` header: at once for a key seen valid lately
   * (the cache), else after reading storage. `gate` is asked before storage is read for a key this
   * instance has not recently seen valid; when it refuses, only a key known to exist is looked up,
   * so made-up keys cannot make it read storage.
   */
  authenticate(token: string | undefined, gate?: LookupGate): SyncOrAsync<AuthResult> {
    if (token === undefined || token === '') return { ok: false, reason: 'missing' };
    return this.authenticateCached(token) ?? this.lookUp(token, gate);
  }

  /**
   * The verdict on a token whose key is in the cache and fresh; undefined when only storage can
   * tell. Keyed by the token's SHA-256, as storage keeps it, so that this process's memory (a heap
   * dump, a core file) holds no key in clear; a token of another length is not hashed at all.
   */
  authenticateCached(token: string): AuthResult | undefined {
    if (token.length !== API_KEY_LENGTH) return undefined;
    const now = this.clock.now();
    const entry = this.cache.get(hashApiKey(token));
    if (entry === undefined || !this.fresh(entry, now)) return undefined;
    return this.verdict(entry.record, entry.secretEndsAt, now);
  }

  private async lookUp(token: string, gate: LookupGate | undefined): Promise<AuthResult> {
    const now = this.clock.now();
    // Format and checksum first: made-up keys never reach storage.
    if (!isWellFormedApiKey(token, this.environment)) return { ok: false, reason: 'malformed' };
    const hash = hashApiKey(token);
    const entry = this.cache.get(hash);
    // An expired entry of a valid key still shows the key is worth a lookup.
    const known = entry !== undefined && entry.record.revokedAt === undefined;
    if (!known && gate !== undefined && !(await gate()) && !(await this.known.has(hash))) {
      return { ok: false, reason: 'not_looked_up' };
    }
    const epoch = this.epoch;
    const record = await this.store.findByHash(hash);
    if (record === undefined) {
      this.cache.delete(hash);
      return { ok: false, reason: 'unknown' };
    }
    // The key's previous secret, after a roll: it works until its grace end.
    const secretEndsAt = record.hash === hash ? undefined : (record.previousHashExpiresAt ?? now);
    // Read before an invalidation that came while it was read: it may be the old key, used once, not cached.
    if (epoch === this.epoch) this.remember(hash, record, now, secretEndsAt);
    return this.verdict(record, secretEndsAt, now);
  }

  private verdict(record: ApiKeyRecord, secretEndsAt: number | undefined, now: number): AuthResult {
    if (record.revokedAt !== undefined) return { ok: false, reason: 'revoked' };
    // Against the clock on every request, not left to the cache: an expiry holds to the second.
    if (now >= endOf(record, secretEndsAt)) return { ok: false, reason: 'expired', key: record };
    this.touch(record.id, now);
    return { ok: true, key: record };
  }

  private remember(
    hash: string,
    record: ApiKeyRecord,
    now: number,
    secretEndsAt: number | undefined,
  ): void {
    this.cache.delete(hash); // re-inserting moves it to the back of the eviction order
    if (this.cache.size >= ApiKeyService.CACHE_MAX_ENTRIES) {
      // Map keeps insertion order: dropping the first entry drops the oldest.
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(hash, {
      record,
      loadedAt: now,
      countMoves: this.countMoves,
      ...(secretEndsAt !== undefined ? { secretEndsAt } : {}),
    });
  }

  /**
   * Counts a call to a deprecated operation made with this key. Like last-used, coarse on purpose:
   * counts add up in memory and go to storage in one transaction per interval, never a write per
   * request. The first call only starts the interval, so a burst is one write, not two.
   */
  recordDeprecatedCall(id: string): void {
    this.pendingDeprecated.set(id, (this.pendingDeprecated.get(id) ?? 0) + 1);
    const now = this.clock.now();
    this.lastDeprecatedFlush ??= now;
    if (
      now - this.lastDeprecatedFlush >= ApiKeyService.TOUCH_INTERVAL_MS ||
      this.pendingDeprecated.size >= ApiKeyService.CACHE_MAX_ENTRIES
    ) {
      this.lastDeprecatedFlush = now;
      void this.flushDeprecatedCalls();
    }
  }

  /**
   * Writes the counts gathered so far; a failed write keeps them for the next one. Called on the
   * interval, and at shutdown so that a stop loses nothing counted.
   */
  async flushDeprecatedCalls(): Promise<void> {
    // One write at a time: two overlapping ones could not hand back their counts in order.
    while (this.flushing !== undefined) await this.flushing;
    if (this.pendingDeprecated.size === 0) return;
    const batch = this.pendingDeprecated;
    this.pendingDeprecated = new Map();
    const counts = [...batch].map(([id, calls]) => ({ id, calls }));
    this.flushing = this.store.addDeprecatedCalls(counts).then(
      () => undefined,
      () => {
        // Kept for the next interval; the map holds at most one entry per key in use.
        for (const { id, calls } of counts) {
          this.pendingDeprecated.set(id, (this.pendingDeprecated.get(id) ?? 0) + calls);
        }
      },
    );
    try {
      await this.flushing;
    } finally {
      this.flushing = undefined;
    }
  }

  /** Last-used is coarse on purpose: at most one write per key per interval, never awaited. */
  private touch(id: string, now: number): void {
    const last = this.lastTouched.get(id);
    if (last !== undefined && now - last < ApiKeyService.TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(id, now);
    if (this.lastTouched.size > ApiKeyService.CACHE_MAX_ENTRIES) this.lastTouched.clear();
    this.store.touch(id, now).catch(() => {
      // Losing a last-used update is harmless; the next interval writes it again.
      this.lastTouched.delete(id);
    });
  }
}
