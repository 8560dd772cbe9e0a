import { afterEach, describe, expect, it } from 'vitest';
import { ApiKeyService } from '../../src/domain/api-keys/api-key-service.js';
import type { ApiKeyStore, Storage } from '../../src/domain/ports.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { TestClock } from '../helpers/test-clock.js';

type Counts = Parameters<ApiKeyStore['addDeprecatedCalls']>[0];

/** An in-memory SQLite store whose deprecated-call writes are recorded, and can be made to fail. */
async function setup() {
  const storage = await createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true });
  const writes: Counts[] = [];
  let failing = false;
  const store: ApiKeyStore = Object.create(storage.apiKeys) as ApiKeyStore;
  store.addDeprecatedCalls = async (counts) => {
    writes.push(counts);
    if (failing) throw new Error('database down');
    return storage.apiKeys.addDeprecatedCalls(counts);
  };
  const clock = new TestClock();
  const service = new ApiKeyService(store, clock, 'production');
  opened.push(storage);
  return {
    storage,
    clock,
    service,
    writes,
    fail: (value: boolean) => (failing = value),
    calls: async (id: string) => (await storage.apiKeys.findById(id))?.deprecatedCalls,
  };
}

const opened: Storage[] = [];
afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close();
});

describe('ApiKeyService.recordDeprecatedCall', () => {
  it('writes nothing per call: counts wait in memory for the interval, then go in one batch', async () => {
    const { clock, service, writes, calls } = await setup();
    const { record: a } = await service.create({ plan: 'pro' });
    const { record: b } = await service.create({ plan: 'free' });
    for (let i = 0; i < 1_000; i++) service.recordDeprecatedCall(a.id);
    service.recordDeprecatedCall(b.id);
    clock.advance(ApiKeyService.TOUCH_INTERVAL_MS - 1);
    service.recordDeprecatedCall(a.id);
    expect(writes).toHaveLength(0);

    clock.advance(1);
    service.recordDeprecatedCall(b.id);
    await service.flushDeprecatedCalls();
    expect(writes).toHaveLength(1);
    expect(writes[0]).toEqual(
      expect.arrayContaining([
        { id: a.id, calls: 1_001 },
        { id: b.id, calls: 2 },
      ]),
    );
    expect(await calls(a.id)).toBe(1_001);
    expect(await calls(b.id)).toBe(2);
  });

  it('keeps the counts of a failed write for the next one', async () => {
    const { clock, service, writes, fail, calls } = await setup();
    const { record } = await service.create({ plan: 'pro' });
    fail(true);
    service.recordDeprecatedCall(record.id);
    clock.advance(ApiKeyService.TOUCH_INTERVAL_MS);
    service.recordDeprecatedCall(record.id);
    await service.flushDeprecatedCalls();
    // The interval's write failed, and so did the one asked for after it: nothing stored, nothing lost.
    expect(writes).toHaveLength(2);
    expect(await calls(record.id)).toBe(0);

    fail(false);
    service.recordDeprecatedCall(record.id);
    await service.flushDeprecatedCalls();
    expect(await calls(record.id)).toBe(3);
  });

  it('flushes what is pending when asked (at shutdown), and nothing when nothing is', async () => {
    const { service, writes, calls } = await setup();
    const { record } = await service.create({ plan: 'pro' });
    await service.flushDeprecatedCalls();
    expect(writes).toHaveLength(0);
    service.recordDeprecatedCall(record.id);
    await service.flushDeprecatedCalls();
    expect(await calls(record.id)).toBe(1);
  });
});
