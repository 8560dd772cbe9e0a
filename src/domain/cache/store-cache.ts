import type { PageQuery } from '../pets/pet-service.js';
import type { GenerationReading, StoreGeneration } from '../ports.js';
import { BoundedCache } from './bounded-cache.js';

/**
 * THE RULE, stated here and nowhere else: within one store generation, a stored pet never changes
 * (v1 neither updates nor deletes pets), and neither does a full page of a listing once the pet
 * after it is below the id horizon (PetService.list calls such a page `final`). So an answer built
 * from either may be served from memory for as long as the generation this instance sees stays the
 * same.
 *
 * Anything that can change stored data in place (a restore, a migration, `petstore cache-reset`,
 * any future update or delete) must change the generation (see StoreGeneration and
 * docs/architecture.md). Every in-memory copy of stored data in the process is cached here (pets,
 * pages) or registered here (the API key cache, the admin token cache), and all are invalidated
 * together when the generation an instance reads differs from the one it read before. The id
 * horizon behind `final` starts over at the same moment: the backend resets it in the very read
 * that saw the new generation.
 *
 * What is cached is the caller's (`T`): the HTTP layer caches whole answers.
 */

/** A cached value, with the bytes it takes, about (strings count two bytes a character). */
export interface Weighed {
  readonly weight: number;
}

/**
 * Each distinct query is its own page, whatever parameters PageQuery grows: the parameters given,
 * in a fixed order. An empty cursor is a cursor (and refused), never the same page as none.
 */
function pageKey(query: PageQuery): string {
  let key = '';
  for (const name of Object.keys(query).sort()) {
    key += `${name}=${String(query[name as keyof PageQuery])}\u0000`;
  }
  return key;
}

/** Runs `tick` every `ms` until the returned function is called. */
export type Every = (ms: number, tick: () => void) => () => void;

const realTimer: Every = (ms, tick) => {
  // Unref'd: the cache never keeps a process alive.
  const timer = setInterval(tick, ms).unref();
  return () => clearInterval(timer);
};

export interface StoreCacheOptions {
  /** Byte budgets of the cached pets and pages. */
  budgets: { pets: number; pages: number };
  /** How often the generation is read once the cache is in use; "within seconds" rests on it. */
  pollMs?: number;
  /** The timer of the reads; tests pass a trigger of their own. */
  every?: Every;
  /** Told of each invalidation, for the log. */
  onInvalidated?: (change: { from: string; to: string; entries: number }) => void;
  /** The clock whose time each read is said to start at (see onKeysRead); the domain's Clock. */
  now?: () => number;
}

/**
 * What a successful read says of the keys: nothing changed them between the previous read and
 * `startedAt` (changed false), or something did (changed true: every cached key goes stale).
 */
export type KeysRead = (read: { startedAt: number; changed: boolean }) => void;

/** A value loaded for a page, and whether the page is final (may be cached: THE RULE). */
export interface PageLoad<T> {
  readonly value: T;
  readonly final: boolean;
}

export class StoreCache<T extends Weighed> {
  readonly pets: BoundedCache<T>;
  readonly pages: BoundedCache<T>;
  private readonly invalidations: Array<() => void> = [];
  private readonly keysReads: KeysRead[] = [];
  /** The generation the cached values belong to; undefined until first read (nothing is cached). */
  private seen: string | undefined;
  /** The key change count of the last read. */
  private seenKeys: string | undefined;
  /** Bumped by each invalidation: a value loaded across one may be of the old data, not cached. */
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
    private readonly options: StoreCacheOptions,
  ) {
    const weigh = (key: string, value: T) => 2 * key.length + value.weight + 100;
    this.pets = new BoundedCache(options.budgets.pets, weigh);
    this.pages = new BoundedCache(options.budgets.pages, weigh);
    this.pollMs = options.pollMs ?? 1_000;
    this.every = options.every ?? realTimer;
  }

  /** Registers a cache kept elsewhere (the API key cache): `invalidate` forgets all of it. */
  onInvalidate(invalidate: () => void): void {
    this.invalidations.push(invalidate);
  }

  /**
   * Tells `listener` of every successful read from now on, the first one included (it reports a
   * change: nothing is known of the keys before it). The reads run once the cache is in use, or
   * from `start()`.
   */
  onKeysRead(listener: KeysRead): void {
    this.keysReads.push(listener);
  }

  /** The pet's cached value, loaded with `load` when there is none; an error of `load` is not cached. */
  pet(id: bigint, load: () => Promise<T>): Promise<T> {
    return this.through(this.pets, String(id), async () => ({ value: await load(), final: true }));
  }

  /** The page's cached value; a loaded page is cached only when `final` (THE RULE). */
  page(query: PageQuery, load: () => Promise<PageLoad<T>>): Promise<T> {
    return this.through(this.pages, pageKey(query), load);
  }

  /**
   * The pet's value when one is cached now; nothing is loaded. The id may come in its decimal form
   * (no sign, no leading zero), as a request path carries it.
   */
  cachedPet(id: bigint | string): T | undefined {
    return this.seen === undefined ? undefined : this.pets.get(String(id));
  }

  /** The page's value when one is cached now; nothing is loaded. */
  cachedPage(query: PageQuery): T | undefined {
    return this.seen === undefined ? undefined : this.pages.get(pageKey(query));
  }

  /**
   * page() for a store that reads synchronously: the cached value, or one read now by `read` and
   * cached when final. Undefined until the first read of the generation (page() waits for it; this
   * cannot), or when `read` cannot answer. Nothing can invalidate between the read and the caching:
   * no turn passes.
   */
  pageSync(query: PageQuery, read: () => PageLoad<T> | undefined): T | undefined {
    if (this.seen === undefined) return undefined;
    const key = pageKey(query);
    const cached = this.pages.get(key);
    if (cached !== undefined) return cached;
    const loaded = read();
    if (loaded?.final === true) this.pages.set(key, loaded.value);
    return loaded?.value;
  }

  private async through(
    cache: BoundedCache<T>,
    key: string,
    load: () => Promise<PageLoad<T>>,
  ): Promise<T> {
    // The first use waits for the first read: only then can a value be told apart from older data.
    if (this.seen === undefined) await this.start();
    const cached = cache.get(key);
    if (cached !== undefined) return cached;
    const epoch = this.epoch;
    const known = this.seen !== undefined;
    const { value, final } = await load();
    if (final && known && epoch === this.epoch) cache.set(key, value);
    return value;
  }

  /**
   * Reads the generation now and invalidates everything when it differs from the one seen before;
   * resolves true when it did. A failed read keeps the cache (the data cannot have changed unseen:
   * the next read that succeeds compares again).
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
    const entries = this.pets.size.entries + this.pages.size.entries;
    this.invalidateAll();
    this.options.onInvalidated?.({ from, to: now, entries });
    return true;
  }

  private invalidateAll(): void {
    this.epoch += 1;
    this.pets.clear();
    this.pages.clear();
    for (const invalidate of this.invalidations) invalidate();
  }

  /**
   * Starts the reads, once a second: a server calls it when it starts, or the first use of the
   * cache does (a CLI command never polls). Resolves when the first read has.
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
