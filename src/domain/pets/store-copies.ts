import type { GenerationReading, StoreGeneration } from '../ports.js';
import type { PetStatus } from './pet.js';

/**
 * THE RULE, stated here and nowhere else: within one store generation, a stored pet never changes
 * (v1 neither updates nor deletes pets), and neither does a full page of a listing once the pet
 * after it has settled (PetService.list calls such a page `final`). So a copy of either may be
 * served from memory for as long as the generation this instance sees stays the same.
 *
 * Anything that can change stored data in place (a restore, a migration, `petstore cache-reset`,
 * any future update or delete) must change the generation (see StoreGeneration and
 * docs/caching.md). Every in-memory copy of stored data in the process is kept here (pets, pages)
 * or registered here (the API key cache), and all are dropped together when the generation an
 * instance reads differs from the one it read before. The settle horizon behind `final` starts
 * over at the same moment: the backend resets it in the very read that saw the new generation.
 */

/** A copy as it is kept: serialized text, and the text of a header that goes with it (a Link). */
export interface KeptCopy {
  readonly body: string;
  readonly link?: string;
}

/** What a listing is asked for; each distinct query is its own page. */
export interface PageQuery {
  limit: number;
  status?: PetStatus;
  cursor?: string;
}

/** A kept copy, and whether it was read since eviction last passed it (second chance). */
interface Entry {
  readonly copy: KeptCopy;
  read: boolean;
}

/**
 * Copies within a budget of bytes; once they exceed it, copies not read lately go first (the
 * CLOCK approximation of least recently used: a read only marks its entry, where moving it to the
 * back of the order cost two Map writes on every request), so memory stays bounded whatever the
 * data size.
 */
export class BoundedCopies {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(private readonly budgetBytes: number) {}

  get(key: string): KeptCopy | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    entry.read = true;
    return entry.copy;
  }

  set(key: string, copy: KeptCopy): void {
    const size = sizeOf(key, copy);
    if (size > this.budgetBytes) return;
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.bytes -= sizeOf(key, previous.copy);
      this.entries.delete(key);
    }
    this.entries.set(key, { copy, read: false });
    this.bytes += size;
    // From the oldest: one read since the last pass buys another round at the back.
    while (this.bytes > this.budgetBytes) {
      const [oldKey, oldest] = this.entries.entries().next().value as [string, Entry];
      this.entries.delete(oldKey);
      if (oldest.read && oldKey !== key) {
        oldest.read = false;
        this.entries.set(oldKey, oldest);
      } else {
        this.bytes -= sizeOf(oldKey, oldest.copy);
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

/** An empty cursor is a cursor (and refused), never the same page as no cursor at all. */
function pageKey({ limit, status, cursor }: PageQuery): string {
  return `${limit}|${status ?? ''}|${cursor === undefined ? '' : `c${cursor}`}`;
}

/** Strings take two bytes a character in the worst case, plus the entry's own overhead. */
function sizeOf(key: string, entry: KeptCopy): number {
  return 2 * (key.length + entry.body.length + (entry.link?.length ?? 0)) + 100;
}

/** Runs `tick` every `ms` until the returned function is called. */
export type Every = (ms: number, tick: () => void) => () => void;

const realTimer: Every = (ms, tick) => {
  // Unref'd: the copies never keep a process alive.
  const timer = setInterval(tick, ms).unref();
  return () => clearInterval(timer);
};

export interface StoreCopiesOptions {
  /** Byte budgets of the kept pets and pages. */
  budgets: { pets: number; pages: number };
  /** How often the generation is read once copies are in use; "within seconds" rests on it. */
  pollMs?: number;
  /** The timer of the reads; tests pass a trigger of their own. */
  every?: Every;
  /** Told of each drop, for the log. */
  onDropped?: (change: { from: string; to: string; copies: number }) => void;
  /** The clock whose time each read is said to start at (see onKeysRead); the domain's Clock. */
  now?: () => number;
}

/**
 * What a successful read says of the keys: nothing changed them between the previous read and
 * `startedAt` (changed false), or something did (changed true: every cached key goes stale).
 */
export type KeysRead = (read: { startedAt: number; changed: boolean }) => void;

export class StoreCopies {
  readonly pets: BoundedCopies;
  readonly pages: BoundedCopies;
  private readonly drops: Array<() => void> = [];
  private readonly keysReads: KeysRead[] = [];
  /** The generation the kept copies belong to; undefined until first read (nothing is kept). */
  private seen: string | undefined;
  /** The key change count of the last read. */
  private seenKeys: string | undefined;
  /** Bumped by each drop: a copy loaded across a drop may be of the old data and is not kept. */
  private epoch = 0;
  private readsStarted = 0;
  private readsApplied = 0;
  private stopTimer: (() => void) | undefined;
  private firstRead: Promise<unknown> | undefined;
  private ticking = false;
  private closed = false;
  private readonly pollMs: number;
  private readonly every: Every;

  constructor(
    private readonly generation: StoreGeneration,
    private readonly options: StoreCopiesOptions,
  ) {
    this.pets = new BoundedCopies(options.budgets.pets);
    this.pages = new BoundedCopies(options.budgets.pages);
    this.pollMs = options.pollMs ?? 1_000;
    this.every = options.every ?? realTimer;
  }

  /** Registers a copy kept elsewhere (the API key cache): `drop` forgets all of it. */
  onDrop(drop: () => void): void {
    this.drops.push(drop);
  }

  /**
   * Tells `listener` of every successful read from now on, the first one included (it reports a
   * change: nothing is known of the keys before it). The reads run once a copy is in use, or from
   * `start()`.
   */
  onKeysRead(listener: KeysRead): void {
    this.keysReads.push(listener);
  }

  /** The pet's copy, loaded with `load` when there is none; an error of `load` is not kept. */
  pet(id: bigint, load: () => Promise<KeptCopy>): Promise<KeptCopy> {
    return this.through(this.pets, String(id), async () => ({ copy: await load(), keep: true }));
  }

  /** The page's copy; a loaded page is kept only when `final` (the rule above). */
  page(
    query: PageQuery,
    load: () => Promise<{ copy: KeptCopy; final: boolean }>,
  ): Promise<KeptCopy> {
    return this.through(this.pages, pageKey(query), async () => {
      const { copy, final } = await load();
      return { copy, keep: final };
    });
  }

  /**
   * The pet's copy when one is kept now; nothing is loaded. The id may come in its decimal form
   * (no sign, no leading zero), as a request path carries it.
   */
  keptPet(id: bigint | string): KeptCopy | undefined {
    return this.seen === undefined ? undefined : this.pets.get(String(id));
  }

  /** The page's copy when one is kept now; nothing is loaded. */
  keptPage(query: PageQuery): KeptCopy | undefined {
    return this.seen === undefined ? undefined : this.pages.get(pageKey(query));
  }

  /**
   * page() for a store that reads synchronously: the kept copy, or one read now by `read` and kept
   * when `final`. Undefined until the first read of the generation (page() waits for it; this
   * cannot), or when `read` cannot answer. Nothing can drop the copies between the read and the
   * keeping: no turn passes.
   */
  pageNow(
    query: PageQuery,
    read: () => { copy: KeptCopy; final: boolean } | undefined,
  ): KeptCopy | undefined {
    if (this.seen === undefined) return undefined;
    const key = pageKey(query);
    const kept = this.pages.get(key);
    if (kept !== undefined) return kept;
    const loaded = read();
    if (loaded?.final === true) this.pages.set(key, loaded.copy);
    return loaded?.copy;
  }

  private async through(
    copies: BoundedCopies,
    key: string,
    load: () => Promise<{ copy: KeptCopy; keep: boolean }>,
  ): Promise<KeptCopy> {
    // The first use waits for the first read: only then can a copy be told apart from older data.
    if (this.seen === undefined) await this.start();
    const kept = copies.get(key);
    if (kept !== undefined) return kept;
    const epoch = this.epoch;
    const known = this.seen !== undefined;
    const { copy, keep } = await load();
    if (keep && known && epoch === this.epoch) copies.set(key, copy);
    return copy;
  }

  /**
   * Reads the generation now and drops every copy when it differs from the one seen before;
   * resolves true when it dropped. A failed read keeps the copies (the data cannot have changed
   * unseen: the next read that succeeds compares again).
   */
  async check(): Promise<boolean> {
    const ticket = ++this.readsStarted;
    const startedAt = this.options.now?.() ?? Date.now();
    let reading: GenerationReading;
    try {
      reading = await this.generation.read();
    } catch {
      return false;
    }
    // Reads may finish out of order; an older answer never overrides a newer one.
    if (ticket < this.readsApplied) return false;
    this.readsApplied = ticket;
    const keysChanged = reading.keys !== this.seenKeys;
    this.seenKeys = reading.keys;
    for (const listener of this.keysReads) listener({ startedAt, changed: keysChanged });
    const now = reading.data;
    const from = this.seen;
    this.seen = now;
    if (from === undefined || from === now) return false;
    const copies = this.pets.size.entries + this.pages.size.entries;
    this.dropAll();
    this.options.onDropped?.({ from, to: now, copies });
    return true;
  }

  private dropAll(): void {
    this.epoch += 1;
    this.pets.clear();
    this.pages.clear();
    for (const drop of this.drops) drop();
  }

  /**
   * Starts the reads, once a second: a server calls it when it starts, or the first use of a copy
   * does (a CLI command never polls). Resolves when the first read has.
   */
  start(): Promise<unknown> {
    if (this.firstRead !== undefined || this.closed) return this.firstRead ?? Promise.resolve();
    const tick = (): Promise<unknown> => {
      // One read at a time: a slow database does not pile reads up.
      if (this.ticking) return Promise.resolve();
      this.ticking = true;
      return this.check().finally(() => {
        this.ticking = false;
      });
    };
    this.stopTimer = this.every(this.pollMs, () => void tick());
    this.firstRead = tick();
    return this.firstRead;
  }

  close(): void {
    this.closed = true;
    this.stopTimer?.();
  }
}
