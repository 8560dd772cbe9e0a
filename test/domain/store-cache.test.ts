import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { StoreCache, type Every } from '../../src/domain/cache/store-cache.js';
import type { GenerationReading, StoreGeneration } from '../../src/domain/ports.js';
import { createServices } from '../../src/services.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { overlayStorage } from '../helpers/storage-overlay.js';
import { TestClock } from '../helpers/test-clock.js';

/** A generation moved by hand; `fail` makes reads throw, as a database that does not answer. */
class HandGeneration implements StoreGeneration {
  value = 'g1';
  keys = 'k1';
  fail = false;
  reads = 0;
  async read(): Promise<GenerationReading> {
    this.reads += 1;
    if (this.fail) throw new Error('the database does not answer');
    return { data: this.value, keys: this.keys };
  }
  async bump(): Promise<void> {
    this.value = `${this.value}+`;
  }
}

/** The poll timer, fired by the test instead of by time. */
function handTimer(): { every: Every; fire(): void; stopped: () => boolean } {
  let tick: (() => void) | undefined;
  let stopped = false;
  return {
    every: (_ms, run) => {
      tick = run;
      return () => {
        stopped = true;
      };
    },
    fire: () => tick?.(),
    stopped: () => stopped,
  };
}

const BUDGETS = { pets: 100_000, pages: 100_000 };
/** A cached value as the cache sees one: anything that knows its weight. */
const copy = (body: string) => ({ body, weight: 2 * body.length });
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

function setUp() {
  const generation = new HandGeneration();
  const timer = handTimer();
  const drops: Array<{ from: string; to: string; entries: number }> = [];
  const cache = new StoreCache<ReturnType<typeof copy>>(generation, {
    budgets: BUDGETS,
    every: timer.every,
    onInvalidated: (change) => drops.push(change),
  });
  let keyDrops = 0;
  cache.onInvalidate(() => (keyDrops += 1));
  return { generation, timer, cache, drops, keyDrops: () => keyDrops };
}

describe('StoreCache', () => {
  it('when the generation changes, invalidates every pet and page and the key cache', async () => {
    const { generation, timer, cache, drops, keyDrops } = setUp();
    let loads = 0;
    const pet = () => cache.pet(2n, async () => copy(`pet #${++loads}`));
    const page = () =>
      cache.page({ limit: 2 }, async () => ({ value: copy(`page #${++loads}`), final: true }));

    expect((await pet()).body).toBe('pet #1');
    expect((await page()).body).toBe('page #2');
    expect((await pet()).body).toBe('pet #1'); // kept
    expect(cache.pets.size.entries + cache.pages.size.entries).toBe(2);

    timer.fire(); // same generation: nothing happens
    await nextTurn();
    expect(keyDrops()).toBe(0);
    expect((await pet()).body).toBe('pet #1');

    await generation.bump();
    timer.fire();
    await nextTurn();
    expect(cache.pets.size.entries + cache.pages.size.entries).toBe(0);
    expect(keyDrops()).toBe(1);
    expect(drops).toEqual([{ from: 'g1', to: 'g1+', entries: 2 }]);
    expect((await pet()).body).toBe('pet #3');
    expect((await page()).body).toBe('page #4');
  });

  it('caches nothing loaded across an invalidation: it may be of the old data', async () => {
    const { generation, cache } = setUp();
    await cache.pet(1n, async () => copy('warm-up'));
    let release: () => void = () => undefined;
    const slow = cache.pet(2n, async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return copy('read before the restore');
    });
    await nextTurn();
    await generation.bump();
    expect(await cache.check()).toBe(true);
    release();
    expect((await slow).body).toBe('read before the restore');
    expect((await cache.pet(2n, async () => copy('read after'))).body).toBe('read after');
  });

  it('caches a page only when it is final, and nothing before the first read answered', async () => {
    const { generation, cache } = setUp();
    generation.fail = true;
    let loads = 0;
    const pet = () => cache.pet(1n, async () => copy(`#${++loads}`));
    await pet();
    await pet();
    expect(loads).toBe(2); // no generation known yet: nothing is cached

    generation.fail = false;
    await cache.check();
    await pet();
    await pet();
    expect(loads).toBe(3);
    const open = () =>
      cache.page({ limit: 5, status: 'sold' }, async () => ({ value: copy('x'), final: false }));
    await open();
    await open();
    expect(cache.pages.size.entries).toBe(0);
  });

  it('keeps its entries while the generation cannot be read, and compares again after', async () => {
    const { generation, cache, keyDrops } = setUp();
    await cache.pet(1n, async () => copy('kept'));
    generation.fail = true;
    expect(await cache.check()).toBe(false);
    expect(cache.pets.size.entries).toBe(1);
    generation.fail = false;
    await generation.bump();
    expect(await cache.check()).toBe(true);
    expect(keyDrops()).toBe(1);
  });

  it('reads on its timer once in use, never before, and stops when closed', async () => {
    const { generation, timer, cache } = setUp();
    expect(generation.reads).toBe(0);
    await cache.pet(1n, async () => copy('a'));
    expect(generation.reads).toBe(1);
    timer.fire();
    await nextTurn();
    expect(generation.reads).toBe(2);
    cache.close();
    expect(timer.stopped()).toBe(true);
  });
});

describe('the composition root', () => {
  it('invalidates the API key cache when the store generation changes', async () => {
    const storage = await createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true });
    let lookups = 0;
    const counted = overlayStorage(storage, {
      apiKeys: {
        findByHash: (hash) => {
          lookups += 1;
          return storage.apiKeys.findByHash(hash);
        },
      },
    });
    const services = await createServices(loadConfig({}), {
      storage: counted,
      clock: new TestClock(),
    });
    try {
      const { key } = await services.apiKeys.create({ plan: 'free' });
      await services.cache.check(); // the first read: the generation is known
      await services.apiKeys.authenticate(key);
      await services.apiKeys.authenticate(key);
      expect(lookups).toBe(1);
      expect(await services.cache.check()).toBe(false);
      await storage.generation.bump();
      expect(await services.cache.check()).toBe(true);
      await services.apiKeys.authenticate(key);
      expect(lookups).toBe(2);
    } finally {
      await services.close();
      await storage.close();
    }
  });
});
