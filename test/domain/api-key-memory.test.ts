import { afterEach, describe, expect, it } from 'vitest';
import { ApiKeyService } from '../../src/domain/api-keys/api-key-service.js';
import { generateApiKey } from '../../src/domain/api-keys/key-format.js';
import type { Storage } from '../../src/domain/ports.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { TestClock } from '../helpers/test-clock.js';

const opened: Storage[] = [];
afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close();
});

describe('ApiKeyService memory under made-up keys', () => {
  it('holds nothing per unknown, revoked or malformed token, only per real key', async () => {
    const storage = await createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true });
    opened.push(storage);
    const clock = new TestClock();
    const service = new ApiKeyService(storage.apiKeys, clock, 'production');
    const real = await Promise.all(
      Array.from({ length: 5 }, () => service.create({ plan: 'pro' })),
    );
    const revoked = await service.create({ plan: 'pro' });
    await storage.apiKeys.revoke(revoked.record.id, clock.now());
    for (const { key } of real) expect(await service.authenticate(key)).toMatchObject({ ok: true });

    // 2,000 well-formed unknown keys, most with the address gate open (storage is read), some
    // with it shut (only the known-key set is asked, which reloads at most every 100 ms of real
    // time), as an address over its budget would be.
    for (let i = 0; i < 2_000; i++) {
      const gate = async () => i % 200 !== 0;
      const result = await service.authenticate(generateApiKey('production'), gate);
      expect(result.ok).toBe(false);
      await service.authenticate(`pa_live_made-up-${i}`);
      await service.authenticate(revoked.key);
      service.recordDeprecatedCall(real[i % real.length]?.record.id ?? '');
      clock.advance(1_000);
    }

    const footprint = service.footprint;
    expect(footprint.knownPrefixes).toBe(6);
    expect(footprint.cache).toBeLessThanOrEqual(6);
    expect(footprint.lastTouched).toBeLessThanOrEqual(5);
    expect(footprint.pendingDeprecated).toBeLessThanOrEqual(5);
    await service.flushDeprecatedCalls();
  });
});
