import type { ApiKeyStore } from '../ports.js';

/** Real time between two loads, whatever the injected clock says: this bounds database load. */
const MIN_RELOAD_INTERVAL_MS = 100;
/**
 * Longer than any transaction that inserts a key can stay open (statement and idle-in-transaction
 * timeouts are seconds). A sequence number is taken before its transaction commits, so a key may
 * become visible after keys with higher numbers; once this long has passed since a number was seen,
 * every lower number has committed or never will.
 */
export const KEY_SEQ_CERTAIN_AFTER_MS = 60_000;

/**
 * Which key hashes exist, loaded incrementally from storage by the keys' sequence numbers (unlike
 * creation times, they do not depend on the clock of the host that created the key). It lets an
 * address that is over its budget still use a real key, without letting made-up keys cause a
 * storage lookup each: however many arrive, storage sees at most one small query per interval.
 * Each load reads again the keys numbered since what was seen KEY_SEQ_CERTAIN_AFTER_MS ago, so a key
 * that committed late behind a higher number is still found. Only a 16-hex-digit prefix is kept
 * per key; a collision merely allows one lookup.
 */
export class KnownKeyHashes {
  private readonly prefixes = new Set<string>();
  /** Every key numbered at or below it is loaded. */
  private certainSeq = 0;
  /** The highest number each recent load saw, and when: the candidates for certainSeq. */
  private seen: Array<{ seq: number; at: number }> = [];
  private lastLoad = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly store: Pick<ApiKeyStore, 'hashesAfter'>,
    /** Monotonic milliseconds; real time, since it bounds database load. */
    private readonly monotonicNow: () => number = () => performance.now(),
  ) {}

  /** Whether a key with this hash exists (or was revoked); may load keys created lately. */
  async has(hash: string): Promise<boolean> {
    const prefix = hash.slice(0, 16);
    if (this.prefixes.has(prefix)) return true;
    await this.load();
    return this.prefixes.has(prefix);
  }

  /** Prefixes held: one per key that exists, never one per token a client made up. */
  get size(): number {
    return this.prefixes.size;
  }

  /** Keys this process creates are known at once. */
  add(hash: string): void {
    this.prefixes.add(hash.slice(0, 16));
  }

  /**
   * One load at a time, at most one per interval: a caller arriving too soon waits for the next
   * load rather than being told no, so a key created a moment ago is still found.
   */
  private load(): Promise<void> {
    if (this.loading) return this.loading;
    const wait = this.lastLoad + MIN_RELOAD_INTERVAL_MS - this.monotonicNow();
    const delay =
      wait > 0 ? new Promise<void>((resolve) => setTimeout(resolve, wait)) : Promise.resolve();
    this.loading = delay
      .then(() => this.loadOnce())
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  private async loadOnce(): Promise<void> {
    const startedAt = this.monotonicNow();
    this.lastLoad = startedAt;
    // What was seen long enough before this load began is certain once this load has read it.
    const certain = this.seen.filter((s) => s.at <= startedAt - KEY_SEQ_CERTAIN_AFTER_MS);
    const rows = await this.store.hashesAfter(this.certainSeq);
    let highest = this.certainSeq;
    for (const row of rows) {
      this.prefixes.add(row.hash.slice(0, 16));
      if (row.seq > highest) highest = row.seq;
    }
    for (const s of certain) if (s.seq > this.certainSeq) this.certainSeq = s.seq;
    this.seen = [
      ...this.seen.filter((s) => s.at > startedAt - KEY_SEQ_CERTAIN_AFTER_MS),
      { seq: highest, at: startedAt },
    ];
  }
}
