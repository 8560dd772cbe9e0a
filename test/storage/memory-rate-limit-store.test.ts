import { describe, expect, it } from 'vitest';
import { MemoryRateLimitStore } from '../../src/storage/memory/memory-rate-limit-store.js';
import { TestClock } from '../helpers/test-clock.js';
import { describeRateLimitStoreContract } from './rate-limit-store-contract.js';

describeRateLimitStoreContract('memory', async () => new MemoryRateLimitStore(new TestClock()));

describe('MemoryRateLimitStore memory', () => {
  const minute = [{ name: 'minute', limit: 30, lengthMs: 60_000 }];
  const T0 = Date.parse('2026-11-23T12:00:00Z');

  it('drops every entry once its windows have ended, a bounded amount per call', async () => {
    const store = new MemoryRateLimitStore(new TestClock(T0));
    for (let i = 0; i < 50_000; i++) {
      await store.consume({
        subject: `addr:10.0.${i >> 8}.${i & 255}`,
        windows: minute,
        now: T0 + (i % 1000),
      });
    }
    expect(store.size).toBe(50_000);
    const later = T0 + 60_000;
    // Each call sweeps at most 2,000 expired entries, so no single request pays for them all.
    await store.consume({ subject: 'addr:192.0.2.1', windows: minute, now: later });
    expect(store.size).toBe(50_000 - 2_000 + 1);
    for (let i = 0; i < 30; i++) {
      await store.consume({ subject: 'addr:192.0.2.1', windows: minute, now: later + 1 });
    }
    expect(store.size).toBe(1);
    await store.close();
  });

  it('keeps an entry whose window is still open, and one that is banned', async () => {
    const store = new MemoryRateLimitStore(new TestClock(T0));
    const keyWindows = [{ name: 'minute', limit: 1, lengthMs: 60_000 }];
    const ban = { after: 0, durationMs: 600_000 };
    await store.consume({ subject: 'key:a', windows: keyWindows, now: T0, ban });
    await store.consume({ subject: 'key:a', windows: keyWindows, now: T0, ban });
    await expect(
      store.consume({ subject: 'key:a', windows: keyWindows, now: T0, ban }),
    ).resolves.toMatchObject({ kind: 'banned', started: true });
    for (let i = 0; i < 3; i++) {
      await store.consume({ subject: 'key:b', windows: keyWindows, now: T0 + 120_000 + i });
    }
    expect(store.size).toBe(2);
    await expect(
      store.consume({ subject: 'key:a', windows: keyWindows, now: T0 + 120_000, ban }),
    ).resolves.toMatchObject({ kind: 'banned' });
    await store.close();
  });
});
