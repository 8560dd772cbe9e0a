import type { Clock } from '../clock.js';
import type { KeyUsageStore } from '../ports.js';
import { type UsageCount, utcDay } from './key-audit.js';

const DAY_MS = 86_400_000;

/**
 * Counts requests per key and UTC day in memory and writes them in one transaction per flush
 * (on an interval and at shutdown), never a write per request. A failed write keeps its counts for
 * the next one. Entries: one per key in use per day, so bounded by the keys that exist.
 */
export class KeyUsageCounter {
  /**
   * By UTC day, then key id: looked up with the strings at hand (the day kept below, the key's
   * id), never a key built per request.
   */
  private pending = new Map<string, Map<string, UsageCount>>();
  /** Counts held in `pending`. */
  private counts = 0;
  private flushing: Promise<void> | undefined;
  // The UTC day of the last count and its bounds: formatting a date per request cost as much as
  // the rest of the count, so it is done once per day instead.
  private day = '';
  private dayStart = 0;
  private dayEnd = 0;

  constructor(
    private readonly store: KeyUsageStore,
    private readonly clock: Clock,
  ) {}

  get size(): number {
    return this.counts;
  }

  record(keyId: string, admitted: boolean): void {
    const now = this.clock.now();
    if (now < this.dayStart || now >= this.dayEnd) {
      this.dayStart = now - (now % DAY_MS);
      this.dayEnd = this.dayStart + DAY_MS;
      this.day = utcDay(now);
    }
    const count = this.countOf(keyId, this.day);
    if (admitted) count.admitted += 1;
    else count.refused += 1;
  }

  /** The pending count of a key and day, made at zero when there is none. */
  private countOf(keyId: string, day: string): UsageCount {
    let byKey = this.pending.get(day);
    if (byKey === undefined) {
      byKey = new Map();
      this.pending.set(day, byKey);
    }
    let count = byKey.get(keyId);
    if (count === undefined) {
      count = { keyId, day, admitted: 0, refused: 0 };
      byKey.set(keyId, count);
      this.counts += 1;
    }
    return count;
  }

  /** Writes what was counted so far; one write at a time, so counts are handed back in order. */
  async flush(): Promise<void> {
    while (this.flushing !== undefined) await this.flushing;
    if (this.counts === 0) return;
    const batch: UsageCount[] = [];
    for (const byKey of this.pending.values()) batch.push(...byKey.values());
    this.pending = new Map();
    this.counts = 0;
    this.flushing = this.store.add(batch).then(
      () => undefined,
      (error: unknown) => {
        for (const count of batch) {
          const kept = this.countOf(count.keyId, count.day);
          kept.admitted += count.admitted;
          kept.refused += count.refused;
        }
        throw error;
      },
    );
    try {
      await this.flushing;
    } finally {
      this.flushing = undefined;
    }
  }
}
