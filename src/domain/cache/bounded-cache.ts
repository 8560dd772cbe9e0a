/** An entry, and whether it was read since eviction last passed it (second chance). */
interface Entry<T> {
  readonly value: T;
  readonly weight: number;
  read: boolean;
}

/**
 * A cache within a budget of bytes (as `weigh` estimates them); once over it, entries not read
 * lately are evicted first, by CLOCK, the second-chance approximation of least recently used: a
 * read only marks its entry, where moving it to the back of the order would cost two Map writes
 * on every read. Memory stays bounded whatever the data size.
 */
export class BoundedCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private bytes = 0;

  constructor(
    private readonly budgetBytes: number,
    private readonly weigh: (key: string, value: T) => number,
  ) {}

  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    entry.read = true;
    return entry.value;
  }

  set(key: string, value: T): void {
    const weight = this.weigh(key, value);
    if (weight > this.budgetBytes) return;
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.bytes -= previous.weight;
      this.entries.delete(key);
    }
    this.entries.set(key, { value, weight, read: false });
    this.bytes += weight;
    // From the oldest: one read since the last pass buys another round at the back.
    while (this.bytes > this.budgetBytes) {
      const [oldKey, oldest] = this.entries.entries().next().value as [string, Entry<T>];
      this.entries.delete(oldKey);
      if (oldest.read && oldKey !== key) {
        oldest.read = false;
        this.entries.set(oldKey, oldest);
      } else {
        this.bytes -= oldest.weight;
      }
    }
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  /** For tests and metrics. */
  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}
