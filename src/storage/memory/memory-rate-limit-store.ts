import type { Clock } from '../../domain/clock.js';
import type {
  ConsumeOutcome,
  ConsumeRequest,
  LimitWindow,
  LiveBan,
  RateLimitStore,
} from '../../domain/ports.js';

/** One window's counter: which window (its start), requests counted, and 429s given in it. */
interface Counter {
  name: string;
  start: number;
  count: number;
  refusals: number;
}

interface Entry {
  /** One per window name; an array, not a Map, because a million entries must stay small. */
  counters: Counter[];
  ban: LiveBan | undefined;
  /** When every counter and the ban have ended: the entry can then go. */
  expiresAt: number;
  /** The sweep bucket the entry is filed under. */
  bucket: number;
}

const BUCKET_MS = 60_000;
/** Entries swept per request, so that a mass expiry (midnight UTC) never stalls one request. */
const SWEEP_PER_CALL = 2_000;
const SWEEP_INTERVAL_MS = 10_000;

function windowStart(window: LimitWindow, now: number): number {
  return Math.floor(now / window.lengthMs) * window.lengthMs;
}

/**
 * Counters in this process's memory, for a single instance (REDIS_URL shares them between several).
 * Every operation runs synchronously, so each is atomic. Memory stays bounded: entries are filed in
 * per-minute buckets by expiry and dropped once expired, a little on every call and on a timer.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly backend = 'memory';
  private readonly entries = new Map<string, Entry>();
  private readonly buckets = new Map<number, string[]>();
  private nextDue = Number.POSITIVE_INFINITY;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly clock: Clock) {
    this.timer = setInterval(
      () => this.sweep(this.clock.now(), Number.POSITIVE_INFINITY),
      SWEEP_INTERVAL_MS,
    );
    this.timer.unref();
  }

  /** Live entries; for tests and the memory benchmark. */
  get size(): number {
    return this.entries.size;
  }

  async consume(request: ConsumeRequest): Promise<ConsumeOutcome> {
    const { subject, windows, now, ban } = request;
    this.sweep(now, SWEEP_PER_CALL);
    const entry = this.entries.get(subject) ?? this.create(subject);
    const counters = windows.map((window) => this.counter(entry, window, now));
    const used = () => counters.map((counter) => counter.count);

    if (entry.ban !== undefined && entry.ban.until > now) {
      return { kind: 'banned', used: used(), ban: entry.ban, started: false };
    }
    entry.ban = undefined;

    const refused = windows.flatMap((window, index) =>
      (counters[index]?.count ?? 0) >= window.limit ? [index] : [],
    );
    if (refused.length === 0) {
      for (const counter of counters) counter.count += 1;
      this.file(entry, subject, windows, now);
      return { kind: 'allowed', used: used() };
    }
    for (const index of refused) {
      const counter = counters[index];
      if (counter) counter.refusals += 1;
    }
    // The first 429 in a window is free; `after` more are tolerated; the next one starts a ban.
    if (ban && refused.some((index) => (counters[index]?.refusals ?? 0) > ban.after + 1)) {
      entry.ban = { startedAt: now, until: now + ban.durationMs };
      // A ban settles the offence: after it, the key gets its full tolerance again.
      for (const counter of entry.counters) counter.refusals = 0;
      this.file(entry, subject, windows, now);
      return { kind: 'banned', used: used(), ban: entry.ban, started: true };
    }
    this.file(entry, subject, windows, now);
    return { kind: 'limited', used: used(), refused };
  }

  async peek(subject: string, windows: readonly LimitWindow[], now: number): Promise<number[]> {
    const entry = this.entries.get(subject);
    return windows.map((window) => {
      const counter = entry?.counters.find((c) => c.name === window.name);
      return counter !== undefined && counter.start === windowStart(window, now)
        ? counter.count
        : 0;
    });
  }

  async lift(subject: string, liftedAt: number): Promise<void> {
    const entry = this.entries.get(subject);
    if (entry?.ban === undefined || entry.ban.startedAt > liftedAt) return;
    entry.ban = undefined;
    for (const counter of entry.counters) counter.refusals = 0;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.entries.clear();
    this.buckets.clear();
  }

  private create(subject: string): Entry {
    const entry: Entry = { counters: [], ban: undefined, expiresAt: 0, bucket: -1 };
    this.entries.set(subject, entry);
    return entry;
  }

  /** The counter of the window `now` falls in; a counter of an earlier window starts over. */
  private counter(entry: Entry, window: LimitWindow, now: number): Counter {
    const start = windowStart(window, now);
    let counter = entry.counters.find((c) => c.name === window.name);
    if (counter === undefined) {
      counter = { name: window.name, start, count: 0, refusals: 0 };
      entry.counters.push(counter);
    } else if (counter.start !== start) {
      counter.start = start;
      counter.count = 0;
      counter.refusals = 0;
    }
    return counter;
  }

  /** Files the entry under the bucket of its expiry, when that moved later. */
  private file(entry: Entry, subject: string, windows: readonly LimitWindow[], now: number): void {
    let expiresAt = entry.ban?.until ?? 0;
    for (const window of windows) {
      expiresAt = Math.max(expiresAt, windowStart(window, now) + window.lengthMs);
    }
    entry.expiresAt = Math.max(entry.expiresAt, expiresAt);
    const bucket = Math.ceil(entry.expiresAt / BUCKET_MS) * BUCKET_MS;
    if (bucket === entry.bucket) return;
    entry.bucket = bucket;
    const list = this.buckets.get(bucket);
    if (list) list.push(subject);
    else this.buckets.set(bucket, [subject]);
    if (bucket < this.nextDue) this.nextDue = bucket;
  }

  /** Drops expired entries, at most `budget` of them; the rest wait for the next call. */
  private sweep(now: number, budget: number): void {
    if (now < this.nextDue) return;
    let left = budget;
    for (const [bucket, subjects] of this.buckets) {
      if (bucket > now) continue;
      while (subjects.length > 0 && left > 0) {
        const subject = subjects.pop() as string;
        left -= 1;
        const entry = this.entries.get(subject);
        // An entry that was filed again later lives on under its newer bucket.
        if (entry !== undefined && entry.bucket === bucket && entry.expiresAt <= now) {
          this.entries.delete(subject);
        }
      }
      if (subjects.length > 0) return;
      this.buckets.delete(bucket);
    }
    this.nextDue = Math.min(Number.POSITIVE_INFINITY, ...this.buckets.keys());
  }
}
