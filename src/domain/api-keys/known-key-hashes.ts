import type { ApiKeyStore } from '../ports.js';

/** Real time between two loads, whatever the injected clock says: this bounds database load. */
const MIN_RELOAD_INTERVAL_MS = 100;

/**
 * Which key hashes exist, loaded incrementally from storage (only keys whose storage sequence
 * number is above the highest one loaded so far; sequence numbers, unlike creation times, do not
 * depend on the clock of the host that created the key). It lets an address that is over its budget still use a real key, without letting made-up
 * keys cause a storage lookup each: however many arrive, storage sees at most one small query per
 * interval. Only a 16-hex-digit prefix is kept per key; a collision merely allows one lookup.
 */
export class KnownKeyHashes {
  private readonly prefixes = new Set<string>();
  private loadedSeq = 0;
  private lastLoad = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;

  constructor(private readonly store: Pick<ApiKeyStore, 'hashesAfter'>) {}

  /** Whether a key with this hash exists (or was revoked); may load keys created lately. */
  async has(hash: string): Promise<boolean> {
    const prefix = hash.slice(0, 16);
    if (this.prefixes.has(prefix)) return true;
    await this.load();
    return this.prefixes.has(prefix);
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
    const wait = this.lastLoad + MIN_RELOAD_INTERVAL_MS - performance.now();
    const delay =
      wait > 0 ? new Promise<void>((resolve) => setTimeout(resolve, wait)) : Promise.resolve();
    this.loading = delay
      .then(() => {
        this.lastLoad = performance.now();
        return this.store.hashesAfter(this.loadedSeq);
      })
      .then((rows) => {
        for (const row of rows) {
          this.prefixes.add(row.hash.slice(0, 16));
          if (row.seq > this.loadedSeq) this.loadedSeq = row.seq;
        }
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }
}
