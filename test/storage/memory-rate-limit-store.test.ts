import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MEMORY_RATE_LIMIT_BOUNDS,
  MemoryRateLimitStore,
} from '../../src/storage/memory/memory-rate-limit-store.js';
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

describe('MemoryRateLimitStore bounds, under a flood of distinct subjects', () => {
  const minute = [{ name: 'minute', limit: 30, lengthMs: 60_000 }];
  const T0 = Date.parse('2026-11-23T12:00:00Z');
  const bounds = { maxEntries: 10_000, maxBytes: 1_000_000 };

  it('keeps entries and estimated bytes under the bound through 100,000 distinct addresses in one window', async () => {
    const clock = new TestClock(T0);
    // Here the entry bound is the one reached (about 260 bytes an entry).
    const store = new MemoryRateLimitStore(clock, { ...bounds, maxBytes: 4_000_000 });
    let most = 0;
    for (let i = 0; i < 100_000; i++) {
      const subject = `addr:10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`;
      await store.consume({ subject, windows: minute, now: clock.now() });
      most = Math.max(most, store.size);
      if (i % 97 === 0) {
        expect(store.estimatedBytes).toBeLessThanOrEqual(4_000_000);
        // The expiry lists are rebuilt before they outgrow the entries.
        expect(store.filedSubjects).toBeLessThanOrEqual(2 * store.size + 1_001);
      }
    }
    expect(most).toBeLessThanOrEqual(bounds.maxEntries);
    expect(store.size).toBe(bounds.maxEntries);
    // The newest are kept, the oldest forgotten.
    expect(await store.peek('addr:10.1.134.159', minute, clock.now())).toEqual([1]);
    expect(await store.peek('addr:10.0.0.0', minute, clock.now())).toEqual([0]);
    await store.close();
  });

  it('keeps the estimated bytes under the bound whatever the subjects weigh (16 KB each)', async () => {
    const store = new MemoryRateLimitStore(new TestClock(T0), bounds);
    const big = 'x'.repeat(16 * 1024);
    for (let i = 0; i < 1_000; i++) {
      await store.consume({ subject: `addr:${big}${i}`, windows: minute, now: T0 });
      expect(store.estimatedBytes).toBeLessThanOrEqual(bounds.maxBytes);
    }
    expect(store.size).toBeLessThanOrEqual(Math.floor(bounds.maxBytes / (32 * 1024)));
    await store.close();
  });

  it('with its default bounds, holds 100,000 addresses well inside them', async () => {
    const store = new MemoryRateLimitStore(new TestClock(T0));
    for (let i = 0; i < 100_000; i++) {
      const subject = `addr:10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`;
      await store.consume({ subject, windows: minute, now: T0 });
    }
    expect(store.size).toBe(100_000);
    expect(store.estimatedBytes).toBeLessThan(DEFAULT_MEMORY_RATE_LIMIT_BOUNDS.maxBytes / 2);
    await store.close();
  });
});

describe('MemoryRateLimitStore pools: address budgets never evict a key', () => {
  const T0 = Date.parse('2026-11-23T12:00:00Z');
  const day = [{ name: 'day', limit: 50, lengthMs: 86_400_000 }];
  const minute = [{ name: 'minute', limit: 30, lengthMs: 60_000 }];

  it('a key that used its 50 a day stays refused through a flood of distinct made-up addresses', async () => {
    const store = new MemoryRateLimitStore(new TestClock(T0), {
      maxEntries: 1_000,
      maxBytes: 1_000_000,
    });
    let allowed = 0;
    const consumeKey = async (now: number) => {
      const outcome = await store.consume({ subject: 'key:k1', windows: day, now });
      if (outcome.kind === 'allowed') allowed += 1;
    };
    for (let i = 0; i < 50; i++) await consumeKey(T0);
    for (let i = 0; i < 5_000; i++) {
      await store.consume({ subject: `addr:203.0.${i >> 8}.${i & 255}`, windows: minute, now: T0 });
    }
    for (let i = 0; i < 50; i++) await consumeKey(T0 + 1);
    expect(allowed).toBe(50);
    expect(await store.peek('key:k1', day, T0 + 2)).toEqual([50]);
    // The address pool stayed within its own bound.
    expect(store.size).toBeLessThanOrEqual(1_000 + 1);
    await store.close();
  });
});
