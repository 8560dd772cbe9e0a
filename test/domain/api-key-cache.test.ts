import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ApiKeyService } from '../../src/domain/api-keys/api-key-service.js';
import { hashApiKey } from '../../src/domain/api-keys/key-format.js';
import type { Storage } from '../../src/domain/ports.js';
import { createServices, type Services } from '../../src/services.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { overlayStorage } from '../helpers/storage-overlay.js';
import { TestClock } from '../helpers/test-clock.js';

/**
 * The key cache over a real SQLite store, through the composition root: how long a key is kept
 * in memory, and that a change by any writer is seen at the next read of the change count
 * (`services.cache.check()`, which a serving instance makes once a second).
 */

const open: Array<{ services: Services; storage: Storage }> = [];
afterEach(async () => {
  for (const { services, storage } of open.splice(0)) {
    await services.close();
    await storage.close();
  }
});

async function setUp(options: { failReads?: () => boolean } = {}) {
  const storage = await createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true });
  let lookups = 0;
  const counted = overlayStorage(storage, {
    apiKeys: {
      findByHash: (hash) => {
        lookups += 1;
        return storage.apiKeys.findByHash(hash);
      },
    },
    generation: {
      read: () => {
        if (options.failReads?.()) return Promise.reject(new Error('the database does not answer'));
        return storage.generation.read();
      },
    },
  });
  const clock = new TestClock();
  const services = await createServices(loadConfig({}), { storage: counted, clock });
  open.push({ services, storage });
  const { record, key } = await services.apiKeys.create({ plan: 'free' });
  return { storage, services, clock, record, key, lookups: () => lookups };
}

describe('the API key cache', () => {
  it('keeps a key while each read of the change count finds nothing changed, up to MAX_CACHED_MS', async () => {
    const { services, clock, key, lookups } = await setUp();
    await services.cache.check();
    expect(await services.apiKeys.authenticate(key)).toMatchObject({ ok: true });
    expect(lookups()).toBe(1);
    // A read a second, as a serving instance makes them: no lookup for minutes.
    const step = 1_000;
    for (let at = step; at < ApiKeyService.MAX_CACHED_MS; at += step) {
      clock.advance(step);
      await services.cache.check();
      expect(await services.apiKeys.authenticate(key)).toMatchObject({ ok: true });
    }
    expect(lookups()).toBe(1);
    clock.advance(step);
    await services.cache.check();
    await services.apiKeys.authenticate(key);
    expect(lookups()).toBe(2);
  });

  it('forgets it at the next read after another writer changed it, and not after mere use', async () => {
    const { storage, services, record, key, lookups } = await setUp();
    await services.cache.check();
    await services.apiKeys.authenticate(key);
    // Last used and deprecated calls are written as the key is used: they change nothing cached.
    await storage.apiKeys.touch(record.id, Date.now());
    await storage.apiKeys.addDeprecatedCalls([{ id: record.id, calls: 1 }]);
    await services.cache.check();
    await services.apiKeys.authenticate(key);
    expect(lookups()).toBe(1);
    // Revoked straight in storage, as `petstore keys revoke` does from another process.
    await storage.apiKeys.revoke(record.id, Date.now());
    expect(await services.apiKeys.authenticate(key)).toMatchObject({ ok: true });
    await services.cache.check();
    // Stale, yet still proof the key was valid: its lookup does not ask the address gate (which
    // spends the address's budget for unknown keys, in Redis on a shared deployment).
    let gateAsked = 0;
    const gate = async () => (gateAsked += 1) > 0;
    expect(await services.apiKeys.authenticate(key, gate)).toEqual({
      ok: false,
      reason: 'revoked',
    });
    expect(lookups()).toBe(2);
    expect(gateAsked).toBe(0);
  });

  it('keeps it CACHE_TTL_MS from its lookup, or from the last read that succeeded, no longer', async () => {
    let failing = false;
    const { services, clock, key, lookups } = await setUp({ failReads: () => failing });
    // No read yet (a CLI never reads): CACHE_TTL_MS from the lookup.
    await services.apiKeys.authenticate(key);
    clock.advance(ApiKeyService.CACHE_TTL_MS - 1);
    await services.apiKeys.authenticate(key);
    expect(lookups()).toBe(1);
    clock.advance(1);
    await services.apiKeys.authenticate(key);
    expect(lookups()).toBe(2);
    // The first read knows nothing of the keys before it: it forgets them all.
    await services.cache.check();
    await services.apiKeys.authenticate(key);
    expect(lookups()).toBe(3);
    // Reads vouch for it while they succeed; once they fail, CACHE_TTL_MS from the last good one.
    clock.advance(3_000);
    await services.cache.check();
    failing = true;
    clock.advance(3_000);
    await services.cache.check();
    await services.apiKeys.authenticate(key);
    expect(lookups()).toBe(3);
    clock.advance(ApiKeyService.CACHE_TTL_MS - 3_000);
    await services.apiKeys.authenticate(key);
    expect(lookups()).toBe(4);
  });
});

describe('what the key caches hold', () => {
  /** The cache's Map, private to the service: what a heap dump of the process would show. */
  const cacheOf = (service: object) => (service as { cache: Map<string, unknown> }).cache;

  it('keys cached API keys and admin tokens by their SHA-256, never by the token itself', async () => {
    const { services, key } = await setUp();
    await services.cache.check();
    expect(await services.apiKeys.authenticate(key)).toMatchObject({ ok: true });
    expect(services.apiKeys.authenticateCached(key)).toMatchObject({ ok: true });
    const { token } = await services.admin.tokens.create('cached');
    const admitted = await services.admin.tokens.authenticate(token, async () => true);
    expect(admitted).toMatchObject({ ok: true });

    for (const [service, secret] of [
      [services.apiKeys, key],
      [services.admin.tokens, token],
    ] as const) {
      const keys = [...cacheOf(service).keys()];
      expect(keys).toContain(hashApiKey(secret));
      expect(keys.some((k) => k.includes(secret) || secret.includes(k))).toBe(false);
    }
  });
});
