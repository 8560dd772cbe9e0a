import { type Clock, MINUTE_MS } from '../../domain/clock.js';
import { KEY_SUBJECT_PREFIX } from '../../domain/rate-limits/rate-limiter.js';
import type {
  ConsumeOutcome,
  ConsumeRequest,
  LimitWindow,
  LiveBan,
  RateLimitStore,
} from '../../domain/ports.js';

/**
 * Three small integers per window, in the order the windows are asked: which window (its number
 * since the epoch, so a later window starts over), requests counted, 429s given in it. Small
 * integers in a plain array keep an entry near 150 bytes: an address flood must not exhaust memory.
 */
const SLOT = 3;

interface Entry {
  slots: number[];
  ban: LiveBan | undefined;
  /** The minute (since the epoch) by whose start every window and the ban have ended. */
  expiry: number;
}

/**
 * What an entry is taken to cost beyond its subject's characters and its slots: the Map's slot,
 * the entry object, its array, and its subject's place in an expiry bucket. An estimate kept on
 * the high side, so that the byte bound holds in the heap, not only on paper.
 */
const ENTRY_OVERHEAD_BYTES = 200;

const entryBytes = (subject: string, slots: number) =>
  ENTRY_OVERHEAD_BYTES + subject.length * 2 + slots * 8;

/**
 * Bounds of each pool: keys' counters and every other subject (address budgets) are kept in pools
 * of their own, so that a flood of made-up addresses can never evict a key's counters (which would
 * hand the key its window again). Keys only reach the store once authenticated, so their pool
 * grows with the keys that exist, not with what a client makes up.
 */
export interface MemoryRateLimitBounds {
  /** Entries kept at most in each pool; past it the pool's oldest entry is dropped. */
  readonly maxEntries: number;
  /** Estimated bytes kept at most in each pool; past it the pool's oldest entries are dropped. */
  readonly maxBytes: number;
}

/**
 * About 80 MB at most. A million clients a minute is far beyond one instance; past it, the oldest
 * entries (the first counted in the longest-lived windows) are forgotten and start over.
 */
export const DEFAULT_MEMORY_RATE_LIMIT_BOUNDS: MemoryRateLimitBounds = {
  maxEntries: 400_000,
  maxBytes: 80 * 1024 * 1024,
};

/** Entries swept per request, so that a mass expiry (midnight UTC) never stalls one request. */
const SWEEP_PER_CALL = 2_000;
const SWEEP_INTERVAL_MS = 10_000;

const windowNumber = (window: LimitWindow, now: number) => Math.floor(now / window.lengthMs);

/**
 * Counters in this process's memory, for a single instance (REDIS_URL shares them between several).
 * Every operation runs synchronously, so each is atomic. A subject is always asked with the same
 * windows in the same order. Memory stays bounded: entries are filed in per-minute buckets by
 * expiry and dropped once expired, a little on every call and on a timer.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly backend = 'memory';
  /** Keys' counters, apart from the rest, each pool with its own bounds. */
  private readonly keyPool = new Pool();
  private readonly otherPool = new Pool();
  /** Subjects by the minute they expire in; a subject filed again later is checked when met. */
  private readonly buckets = new Map<number, string[]>();
  private nextDue = Number.POSITIVE_INFINITY;
  private readonly timer: NodeJS.Timeout;
  /** Subjects listed in the buckets, some of them for entries already dropped or filed again. */
  private filed = 0;

  constructor(
    private readonly clock: Clock,
    private readonly bounds: MemoryRateLimitBounds = DEFAULT_MEMORY_RATE_LIMIT_BOUNDS,
  ) {
    this.timer = setInterval(
      () => this.sweep(this.clock.now(), Number.POSITIVE_INFINITY),
      SWEEP_INTERVAL_MS,
    );
    this.timer.unref();
  }

  /** Live entries; for tests and the memory benchmark. */
  get size(): number {
    return this.keyPool.entries.size + this.otherPool.entries.size;
  }

  /** The estimated bytes of the live entries; for tests and the memory benchmark. */
  get estimatedBytes(): number {
    return this.keyPool.bytes + this.otherPool.bytes;
  }

  /** Subjects listed in the expiry buckets; for tests. */
  get filedSubjects(): number {
    return this.filed;
  }

  async consume(request: ConsumeRequest): Promise<ConsumeOutcome> {
    return this.consumeNow(request);
  }

  /** Always at once: every count is here. */
  consumeNow(request: ConsumeRequest): ConsumeOutcome {
    const { subject, windows, now, ban } = request;
    this.sweep(now, SWEEP_PER_CALL);
    let entry = this.entryOf(subject);
    if (entry === undefined) {
      entry = {
        slots: new Array<number>(windows.length * SLOT).fill(0),
        ban: undefined,
        expiry: 0,
      };
      this.admit(subject, entry);
    }
    const { slots } = entry;
    // Plain loops: this runs on every request.
    for (let i = 0; i < windows.length; i++) {
      const number = windowNumber(windows[i] as LimitWindow, now);
      if (slots[i * SLOT] !== number) {
        slots[i * SLOT] = number;
        slots[i * SLOT + 1] = 0;
        slots[i * SLOT + 2] = 0;
      }
    }

    if (entry.ban !== undefined && entry.ban.until > now) {
      return {
        kind: 'banned',
        used: usedOf(slots, windows.length),
        ban: entry.ban,
        started: false,
      };
    }
    entry.ban = undefined;

    let refused: number[] | undefined;
    for (let i = 0; i < windows.length; i++) {
      if ((slots[i * SLOT + 1] ?? 0) >= (windows[i] as LimitWindow).limit) (refused ??= []).push(i);
    }
    if (refused === undefined) {
      for (let i = 0; i < windows.length; i++) slots[i * SLOT + 1] = (slots[i * SLOT + 1] ?? 0) + 1;
      this.file(entry, subject, windows, now);
      return { kind: 'allowed', used: usedOf(slots, windows.length) };
    }
    for (const i of refused) slots[i * SLOT + 2] = (slots[i * SLOT + 2] ?? 0) + 1;
    // The first 429 in a window is free; `after` more are tolerated; the next one starts a ban.
    if (ban && refused.some((i) => (slots[i * SLOT + 2] ?? 0) > ban.after + 1)) {
      entry.ban = { startedAt: now, until: now + ban.durationMs };
      // A ban ends the offence: after it, the key gets its full tolerance again.
      forgetRefusals(slots);
      this.file(entry, subject, windows, now);
      return { kind: 'banned', used: usedOf(slots, windows.length), ban: entry.ban, started: true };
    }
    this.file(entry, subject, windows, now);
    return { kind: 'limited', used: usedOf(slots, windows.length), refused };
  }

  async peek(subject: string, windows: readonly LimitWindow[], now: number): Promise<number[]> {
    const slots = this.entryOf(subject)?.slots;
    return windows.map((window, i) =>
      slots !== undefined && slots[i * SLOT] === windowNumber(window, now)
        ? (slots[i * SLOT + 1] ?? 0)
        : 0,
    );
  }

  async lift(subject: string, liftedAt: number = this.clock.now()): Promise<void> {
    const entry = this.entryOf(subject);
    if (entry?.ban === undefined || entry.ban.startedAt > liftedAt) return;
    entry.ban = undefined;
    forgetRefusals(entry.slots);
  }

  /** Nothing to drop: this store is the only copy of its counts. */
  async forget(): Promise<void> {}

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.keyPool.clear();
    this.otherPool.clear();
    this.buckets.clear();
    this.filed = 0;
  }

  /**
   * Keeps a new entry within the bounds, whatever subjects arrive: the oldest entries (a Map
   * iterates in insertion order) make room. Dropping one forgets its counts, so a client that
   * outlived a flood of newer ones starts its window over; the bound is set far above what one
   * instance serves, so only a flood of distinct clients reaches it. Only the subject's own pool
   * makes room: addresses never push a key out.
   */
  private admit(subject: string, entry: Entry): void {
    const pool = this.poolOf(subject);
    const cost = entryBytes(subject, entry.slots.length);
    while (
      pool.entries.size > 0 &&
      (pool.entries.size >= this.bounds.maxEntries || pool.bytes + cost > this.bounds.maxBytes)
    ) {
      const oldest = pool.entries.keys().next().value as string;
      this.drop(oldest);
    }
    pool.entries.set(subject, entry);
    pool.bytes += cost;
  }

  private poolOf(subject: string): Pool {
    return subject.startsWith(KEY_SUBJECT_PREFIX) ? this.keyPool : this.otherPool;
  }

  private entryOf(subject: string): Entry | undefined {
    return this.poolOf(subject).entries.get(subject);
  }

  private drop(subject: string): void {
    const pool = this.poolOf(subject);
    const entry = pool.entries.get(subject);
    if (entry === undefined) return;
    pool.entries.delete(subject);
    pool.bytes -= entryBytes(subject, entry.slots.length);
  }

  /** Files the entry under the minute it expires in, when that moved later. */
  private file(entry: Entry, subject: string, windows: readonly LimitWindow[], now: number): void {
    let endsAt = entry.ban?.until ?? 0;
    for (const window of windows) {
      endsAt = Math.max(endsAt, (windowNumber(window, now) + 1) * window.lengthMs);
    }
    const expiry = Math.ceil(endsAt / MINUTE_MS);
    if (expiry <= entry.expiry) return;
    entry.expiry = expiry;
    const list = this.buckets.get(expiry);
    if (list) list.push(subject);
    else this.buckets.set(expiry, [subject]);
    this.filed += 1;
    this.nextDue = Math.min(this.nextDue, expiry * MINUTE_MS);
    // Dropped and refiled entries leave their subjects behind in the buckets until they expire:
    // under a flood the lists would outgrow the entries, so they are rebuilt from the live ones.
    if (this.filed > 2 * this.size + 1_000) this.refile();
  }

  /** Lists every live entry once, under the minute it expires in. */
  private refile(): void {
    this.buckets.clear();
    this.filed = 0;
    this.nextDue = Number.POSITIVE_INFINITY;
    for (const pool of [this.keyPool, this.otherPool]) {
      for (const [subject, { expiry }] of pool.entries) {
        const list = this.buckets.get(expiry);
        if (list) list.push(subject);
        else this.buckets.set(expiry, [subject]);
        this.filed += 1;
        this.nextDue = Math.min(this.nextDue, expiry * MINUTE_MS);
      }
    }
  }

  /** Drops expired entries, at most `budget` of them; the rest wait for the next call. */
  private sweep(now: number, budget: number): void {
    if (now < this.nextDue) return;
    let left = budget;
    for (const [expiry, subjects] of this.buckets) {
      if (expiry * MINUTE_MS > now) continue;
      while (subjects.length > 0 && left > 0) {
        const subject = subjects.pop() as string;
        left -= 1;
        this.filed -= 1;
        // An entry filed again later lives on under its newer bucket.
        if (this.entryOf(subject)?.expiry === expiry) this.drop(subject);
      }
      if (subjects.length > 0) return;
      this.buckets.delete(expiry);
    }
    let next = Number.POSITIVE_INFINITY;
    for (const expiry of this.buckets.keys()) next = Math.min(next, expiry * MINUTE_MS);
    this.nextDue = next;
  }
}

/** Entries in insertion order (the oldest first), and their estimated bytes. */
class Pool {
  readonly entries = new Map<string, Entry>();
  bytes = 0;

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}

/** Requests counted per window, in the order the windows were asked. */
function usedOf(slots: readonly number[], count: number): number[] {
  const used = new Array<number>(count);
  for (let i = 0; i < count; i++) used[i] = slots[i * SLOT + 1] ?? 0;
  return used;
}

function forgetRefusals(slots: number[]): void {
  for (let i = 2; i < slots.length; i += SLOT) slots[i] = 0;
}
