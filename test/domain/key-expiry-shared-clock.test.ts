import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import type { Storage } from '../../src/domain/ports.js';
import { createServices, type Services } from '../../src/services.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { MemoryRateLimitStore } from '../../src/storage/memory/memory-rate-limit-store.js';
import { TestClock } from '../helpers/test-clock.js';

const BEHIND_MS = 45_000;

/** Windows kept on a shared clock (as Redis's) that runs 45 s ahead of this host's. */
class SharedClockStore extends MemoryRateLimitStore {
  get sharedTime(): number {
    return Date.now() + BEHIND_MS;
  }
}

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

async function services(): Promise<Services> {
  const storage: Storage = await createStorage(
    { kind: 'sqlite', path: ':memory:' },
    { migrate: true },
  );
  const rateLimits = new SharedClockStore(new TestClock());
  opened.push(storage, rateLimits);
  // No clock passed in: the host's own, 45 s behind the shared one.
  const built = await createServices(loadConfig({}), { storage, rateLimits });
  opened.push(built);
  return built;
}

describe('expiry and roll grace follow the clock the windows follow, not the host', () => {
  it('refuses a key that expired 10 s ago on the shared clock, though the host says 35 s to go', async () => {
    const { keys, apiKeys } = await services();
    const { key, secret } = await keys.create(
      { change: { plan: 'free' }, expiresAt: Date.now() + BEHIND_MS - 10_000 },
      { kind: 'system' },
    );
    expect(key.state).toBe('expired');
    await expect(Promise.resolve(apiKeys.authenticate(secret))).resolves.toMatchObject({
      ok: false,
      reason: 'expired',
    });
  });

  it("ends a rolled secret's grace on the shared clock", async () => {
    const { keys, apiKeys } = await services();
    const { key, secret } = await keys.create({ change: { plan: 'free' } }, { kind: 'system' });
    await keys.roll(key.id, { graceMs: 30_000 }, { kind: 'system' });
    // Granted 30 s from the shared now, 45 s ahead of the host: it ends 75 s after the host says now.
    const view = await keys.get(key.id);
    const graceEnd = Date.parse(view?.previousSecretExpiresAt ?? '');
    expect(graceEnd - Date.now()).toBeGreaterThan(BEHIND_MS);
    await expect(Promise.resolve(apiKeys.authenticate(secret))).resolves.toMatchObject({
      ok: true,
    });
  });
});
