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
  private pending = new Map<string, UsageCount>();
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
    return this.pending.size;
  }

  record(keyId: string, admitted: boolean): void {
    const now = this.clock.now();
    if (now < this.dayStart || now >= this.dayEnd) {
      this.dayStart = now - (now % DAY_MS);
      this.dayEnd = this.dayStart + DAY_MS;
      this.day = utcDay(now);
    }
    const day = this.day;
    const slot = `${keyId} ${day}`;
    let count = this.pending.get(slot);
    if (count === undefined) {
      count = { keyId, day, admitted: 0, refused: 0 };
      this.pending.set(slot, count);
    }
    if (admitted) count.admitted += 1;
    else count.refused += 1;
  }

  /** Writes what was counted so far; one write at a time, so counts are handed back in order. */
  async flush(): Promise<void> {
    while (this.flushing !== undefined) await this.flushing;
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    this.flushing = this.store.add(batch).then(
      () => undefined,
      (error: unknown) => {
        for (const count of batch) {
          const slot = `${count.keyId} ${count.day}`;
          const kept = this.pending.get(slot);
          if (kept === undefined) this.pending.set(slot, count);
          else {
            kept.admitted += count.admitted;
            kept.refused += count.refused;
          }
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
