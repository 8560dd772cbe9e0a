import { type Clock, MINUTE_MS } from '../../domain/clock.js';
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
  private readonly entries = new Map<string, Entry>();
  /** Subjects by the minute they expire in; a subject filed again later is checked when met. */
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
    let entry = this.entries.get(subject);
    if (entry === undefined) {
      entry = {
        slots: new Array<number>(windows.length * SLOT).fill(0),
        ban: undefined,
        expiry: 0,
      };
      this.entries.set(subject, entry);
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
      // A ban settles the offence: after it, the key gets its full tolerance again.
      forgetRefusals(slots);
      this.file(entry, subject, windows, now);
      return { kind: 'banned', used: usedOf(slots, windows.length), ban: entry.ban, started: true };
    }
    this.file(entry, subject, windows, now);
    return { kind: 'limited', used: usedOf(slots, windows.length), refused };
  }

  async peek(subject: string, windows: readonly LimitWindow[], now: number): Promise<number[]> {
    const slots = this.entries.get(subject)?.slots;
    return windows.map((window, i) =>
      slots !== undefined && slots[i * SLOT] === windowNumber(window, now)
        ? (slots[i * SLOT + 1] ?? 0)
        : 0,
    );
  }

  async lift(subject: string, liftedAt: number): Promise<void> {
    const entry = this.entries.get(subject);
    if (entry?.ban === undefined || entry.ban.startedAt > liftedAt) return;
    entry.ban = undefined;
    forgetRefusals(entry.slots);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.entries.clear();
    this.buckets.clear();
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
    this.nextDue = Math.min(this.nextDue, expiry * MINUTE_MS);
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
        // An entry filed again later lives on under its newer bucket.
        if (this.entries.get(subject)?.expiry === expiry) this.entries.delete(subject);
      }
      if (subjects.length > 0) return;
      this.buckets.delete(expiry);
    }
    let next = Number.POSITIVE_INFINITY;
    for (const expiry of this.buckets.keys()) next = Math.min(next, expiry * MINUTE_MS);
    this.nextDue = next;
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
