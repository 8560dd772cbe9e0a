import type { ApiKeyRecord } from '../api-keys/api-key.js';
import { type Clock, DAY_MS, MINUTE_MS } from '../clock.js';
import type { ConsumeOutcome, ConsumeRequest, LimitWindow, RateLimitStore } from '../ports.js';
import type { SyncOrAsync } from '../sync-or-async.js';
import { addressBucket } from './client-address.js';
import type { Limits } from './plans.js';

/** Requests without a valid key share this budget per client address (IPv6 per /64). */
export const ADDRESS_LIMIT_PER_MINUTE = 30;

/** One window as a response describes it. */
export interface WindowState {
  name: string;
  limit: number;
  remaining: number;
  /** When the window ends (epoch ms, a whole second). */
  resetAt: number;
  lengthSeconds: number;
}

/** What the rate-limit headers of a response describe. */
export interface RateState {
  windows: WindowState[];
  /** The window a client should heed. */
  inForce: WindowState;
  decidedAt: number;
}

export type RateDecision =
  | { allowed: true; windows: WindowState[]; inForce: WindowState; decidedAt: number }
  | {
      allowed: false;
      decidedAt: number;
      reason: 'rate_limited' | 'api_key_banned';
      /** Whole seconds, at least 1: until the refusing window resets, or the ban ends. */
      retryAfterSeconds: number;
      windows: WindowState[];
      inForce: WindowState;
      /** While banned (reason api_key_banned): when the ban ends (epoch ms). */
      bannedUntil?: number;
      /** Set on the one request that started a ban. */
      banStarted?: { until: number };
    };

export interface BanRules {
  /** Refused requests tolerated in a window after its first 429. */
  after: number;
  durationMs: number;
}

/** Windows by limits object: a plan's limits are one object, a key's live as long as its record. */
const windowsOf = new WeakMap<Limits, readonly LimitWindow[]>();

export function keyWindows(limits: Limits): readonly LimitWindow[] {
  let windows = windowsOf.get(limits);
  if (windows === undefined) {
    windows = Object.freeze([
      { name: 'minute', limit: limits.perMinute, lengthMs: MINUTE_MS },
      { name: 'day', limit: limits.perDay, lengthMs: DAY_MS },
    ]);
    windowsOf.set(limits, windows);
  }
  return windows;
}

export const ADDRESS_WINDOWS: readonly LimitWindow[] = [
  { name: 'minute', limit: ADDRESS_LIMIT_PER_MINUTE, lengthMs: MINUTE_MS },
];

function describe(windows: readonly LimitWindow[], used: readonly number[], now: number) {
  return windows.map((window, index): WindowState => {
    const start = Math.floor(now / window.lengthMs) * window.lengthMs;
    return {
      name: window.name,
      limit: window.limit,
      remaining: Math.max(0, window.limit - (used[index] ?? 0)),
      resetAt: start + window.lengthMs,
      lengthSeconds: window.lengthMs / 1000,
    };
  });
}

/**
 * The window a client should heed: the one with the fewest requests left. On a tie the later reset
 * wins, since waiting for the earlier one would not help.
 */
export function windowInForce(windows: readonly WindowState[]): WindowState {
  let best = windows[0];
  if (best === undefined) throw new Error('a limit has at least one window');
  for (let i = 1; i < windows.length; i++) {
    const w = windows[i] as WindowState;
    if (
      w.remaining < best.remaining ||
      (w.remaining === best.remaining && w.resetAt > best.resetAt)
    ) {
      best = w;
    }
  }
  return best;
}

/**
 * Whether `keys unban` lifted this live ban: it named it (the recorded ban's end, from the store's
 * own clock), or it is dated at or after the ban's start. The date is the database's clock and the
 * start the store's, so the date alone is only as good as those two clocks agree; the name holds
 * whatever they say. The date still covers a ban whose record had not reached the database.
 */
function liftedByHand(key: ApiKeyRecord, ban: { startedAt: number; until: number }): boolean {
  if (key.liftedBanUntil !== undefined && key.liftedBanUntil === ban.until) return true;
  return key.banLiftedAt !== undefined && key.banLiftedAt >= ban.startedAt;
}

function secondsUntil(when: number, now: number): number {
  return Math.max(1, Math.ceil((when - now) / 1000));
}

/**
 * Plan limits over fixed UTC windows, bans for keys that keep going after a 429, and the budget of
 * requests without a valid key. Counting lives in the store; this service holds the rules.
 */
export class RateLimiter {
  constructor(
    private readonly store: RateLimitStore,
    private readonly clock: Clock,
    private readonly bans: BanRules,
  ) {}

  /**
   * Counts one request of an authenticated key, or refuses it; at once when the store can tell at
   * once (consumeNow), else once it has asked.
   */
  hitKey(key: ApiKeyRecord, limits: Limits): SyncOrAsync<RateDecision> {
    const now = this.now();
    const windows = keyWindows(limits);
    const subject = keySubject(key.id);
    // A ban recorded in storage outlives a restart of an in-memory store.
    if (key.bannedUntil !== undefined && key.bannedUntil > now) {
      const until = key.bannedUntil;
      return this.store
        .peek(subject, windows, now)
        .then((used) => this.banned(describe(windows, used, now), until, now));
    }
    const request = { subject, windows, now, ban: this.bans };
    const here = this.store.consumeNow(request);
    if (here === undefined) {
      return this.store.consume(request).then((outcome) => this.counted(key, request, outcome));
    }
    return this.counted(key, request, here);
  }

  private counted(
    key: ApiKeyRecord,
    request: ConsumeRequest,
    outcome: ConsumeOutcome,
  ): SyncOrAsync<RateDecision> {
    const { subject, windows, now } = request;
    if (outcome.kind === 'banned' && liftedByHand(key, outcome.ban)) {
      // `keys unban` ran after this ban began (on any instance, seen through the key record). Lifted
      // as of its own start, on the store's clock: a ban begun since stays.
      return this.store
        .lift(subject, outcome.ban.startedAt)
        .then(() => this.store.consume(request))
        .then((again) => this.decided(again, windows, now));
    }
    return this.decided(outcome, windows, now);
  }

  private decided(
    outcome: ConsumeOutcome,
    windows: readonly LimitWindow[],
    now: number,
  ): RateDecision {
    const states = describe(windows, outcome.used, now);
    if (outcome.kind === 'banned') {
      const decision = this.banned(states, outcome.ban.until, now);
      return outcome.started ? { ...decision, banStarted: { until: outcome.ban.until } } : decision;
    }
    return this.decide(outcome, states, now);
  }

  /**
   * What to tell a client while the counters cannot be read (the store is down): nothing left in
   * any window until it may retry. Rate limiting fails closed, and the headers say so.
   */
  unknownState(limits: Limits | undefined, retryAfterSeconds: number): RateState {
    const now = this.now();
    const windows = (limits ? keyWindows(limits) : ADDRESS_WINDOWS).map((w) => ({
      name: w.name,
      limit: w.limit,
      remaining: 0,
      resetAt: Math.ceil(now / 1000) * 1000 + retryAfterSeconds * 1000,
      lengthSeconds: w.lengthMs / 1000,
    }));
    return { windows, inForce: windowInForce(windows), decidedAt: now };
  }

  /**
   * Ends a key's live ban at once (`keys unban`), where the store is shared with the servers: any
   * ban started until now on the store's clock, whatever this host's clock says.
   */
  liftBan(keyId: string): Promise<void> {
    return this.store.lift(keySubject(keyId));
  }

  /** A key changed on some instance: what this one holds of its budget is dropped. */
  keyChanged(keyId: string): Promise<void> {
    return this.store.forget(keySubject(keyId));
  }

  /** Whether the address budget has room, counting nothing: asked before any key lookup. */
  async peekAddress(address: string, budget: AddressBudget = 'public'): Promise<RateDecision> {
    const now = this.now();
    const used = await this.store.peek(addressSubject(address, budget), ADDRESS_WINDOWS, now);
    const states = describe(ADDRESS_WINDOWS, used, now);
    const refused = ADDRESS_WINDOWS.flatMap((w, i) => ((used[i] ?? 0) >= w.limit ? [i] : []));
    return refused.length === 0
      ? this.decide({ kind: 'allowed', used }, states, now)
      : this.decide({ kind: 'limited', used, refused }, states, now);
  }

  /** Counts one request without a valid key against its address, or refuses it. */
  async hitAddress(address: string, budget: AddressBudget = 'public'): Promise<RateDecision> {
    const now = this.now();
    const outcome = await this.store.consume({
      subject: addressSubject(address, budget),
      windows: ADDRESS_WINDOWS,
      now,
    });
    if (outcome.kind === 'banned') throw new Error('addresses are never banned');
    return this.decide(outcome, describe(ADDRESS_WINDOWS, outcome.used, now), now);
  }

  /** The store's clock when it keeps one (Redis's, shared by every instance), else ours. */
  private now(): number {
    return this.store.sharedTime ?? this.clock.now();
  }

  private decide(
    outcome: Exclude<ConsumeOutcome, { kind: 'banned' }>,
    windows: WindowState[],
    now: number,
  ): RateDecision {
    if (outcome.kind === 'allowed') {
      return { allowed: true, windows, inForce: windowInForce(windows), decidedAt: now };
    }
    const refusing = windowInForce(
      outcome.refused.flatMap((index) => (windows[index] ? [windows[index]] : [])),
    );
    return {
      allowed: false,
      reason: 'rate_limited',
      retryAfterSeconds: secondsUntil(refusing.resetAt, now),
      windows,
      inForce: refusing,
      decidedAt: now,
    };
  }

  /**
   * A ban answers like a window with nothing left that resets when the ban ends, so a client
   * reading X-RateLimit-* or RateLimit learns the same as from Retry-After.
   */
  private banned(
    windows: WindowState[],
    until: number,
    now: number,
  ): Extract<RateDecision, { allowed: false }> {
    // A window with requests left reopens when the ban ends; one used up, at the later of the two.
    // The end is kept to the millisecond: RateLimit's t then rounds up to Retry-After's seconds,
    // and X-RateLimit-Reset (rounded up to a whole second) names the same end.
    const exhausted = windows.map((w) => ({
      ...w,
      remaining: 0,
      resetAt: w.remaining === 0 ? Math.max(w.resetAt, until) : until,
    }));
    return {
      allowed: false,
      reason: 'api_key_banned',
      bannedUntil: until,
      retryAfterSeconds: secondsUntil(until, now),
      windows: exhausted,
      inForce: windowInForce(exhausted),
      decidedAt: now,
    };
  }
}

/** How a key's subject starts; a store may keep these apart from address budgets. */
export const KEY_SUBJECT_PREFIX = 'key:';

function keySubject(keyId: string): string {
  return `${KEY_SUBJECT_PREFIX}${keyId}`;
}

/**
 * Which listener's keyless budget: the admin listener keeps its own, so that keyless requests to
 * the pet API from an address (a NAT, a shared proxy) never refuse a valid admin token from it.
 */
export type AddressBudget = 'public' | 'admin';

function addressSubject(address: string, budget: AddressBudget = 'public'): string {
  return budget === 'admin'
    ? `addr-admin:${addressBucket(address)}`
    : `addr:${addressBucket(address)}`;
}
