import { describe, expect, it } from 'vitest';
import type { ApiKeyRecord } from '../../src/domain/api-keys/api-key.js';
import { addressBucket } from '../../src/domain/rate-limits/client-address.js';
import {
  RateLimiter,
  windowInForce,
  type WindowState,
} from '../../src/domain/rate-limits/rate-limiter.js';
import { MemoryRateLimitStore } from '../../src/storage/memory/memory-rate-limit-store.js';
import { TestClock } from '../helpers/test-clock.js';

describe('addressBucket', () => {
  it.each([
    ['203.0.113.9', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['2001:db8:1:2::ffff:192.0.2.1', '2001:db8:1:2::/64'],
    ['not an address', 'not an address'],
  ])('%s counts as %s', (address, bucket) => {
    expect(addressBucket(address)).toBe(bucket);
  });
});

describe('windowInForce', () => {
  const w = (name: string, remaining: number, resetAt: number): WindowState => ({
    name,
    limit: 100,
    remaining,
    resetAt,
    lengthSeconds: 60,
  });

  it('is the window with the fewest requests left', () => {
    expect(windowInForce([w('minute', 10, 1), w('day', 3, 2)]).name).toBe('day');
    expect(windowInForce([w('minute', 2, 1), w('day', 3, 2)]).name).toBe('minute');
  });

  it('on a tie, is the one that resets later, since waiting for the earlier would not help', () => {
    expect(windowInForce([w('minute', 0, 1), w('day', 0, 2)]).name).toBe('day');
  });
});

describe('RateLimiter with bans recorded on the key', () => {
  const T0 = Date.parse('2026-11-23T12:00:00Z');
  const limits = { perMinute: 1, perDay: 100 };
  const key = (extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
    id: 'key_unit',
    label: '',
    plan: 'enterprise',
    customLimits: limits,
    scopes: ['pets:read', 'pets:write'],
    hash: 'h',
    displayPrefix: 'pa_live_xxxx',
    createdAt: T0,
    deprecatedCalls: 0,
    ...extra,
  });
  const setup = () => {
    const clock = new TestClock(T0);
    const store = new MemoryRateLimitStore(clock);
    return {
      clock,
      store,
      limiter: new RateLimiter(store, clock, { after: 1, durationMs: 60_000 }),
    };
  };

  it('refuses a key whose record carries a ban, counting nothing, until it ends', async () => {
    const { clock, store, limiter } = setup();
    const banned = key({ bannedUntil: T0 + 30_500 });
    expect(await limiter.hitKey(banned, limits)).toMatchObject({
      allowed: false,
      reason: 'api_key_banned',
      retryAfterSeconds: 31,
    });
    await expect(
      store.peek('key:key_unit', [{ name: 'minute', limit: 1, lengthMs: 60_000 }], T0),
    ).resolves.toEqual([0]);
    clock.set(T0 + 30_500);
    expect(await limiter.hitKey(banned, limits)).toMatchObject({ allowed: true });
    await store.close();
  });

  it('ends a live ban once the key record shows it was lifted after it started', async () => {
    const { clock, store, limiter } = setup();
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.hitKey(key(), limits));
    expect(decisions.map((d) => (d.allowed ? 'ok' : d.reason))).toEqual([
      'ok',
      'rate_limited',
      'rate_limited',
      'api_key_banned',
    ]);
    expect(decisions[3]).toMatchObject({ banStarted: { until: T0 + 60_000 } });
    clock.advance(1_000);
    // A lift older than the ban changes nothing.
    expect(await limiter.hitKey(key({ banLiftedAt: T0 - 1 }), limits)).toMatchObject({
      reason: 'api_key_banned',
    });
    const lifted = key({ banLiftedAt: T0 + 500 });
    // The minute is still full, so the key is back to plain 429s, with its tolerance renewed.
    expect(await limiter.hitKey(lifted, limits)).toMatchObject({ reason: 'rate_limited' });
    clock.advance(60_000);
    expect(await limiter.hitKey(lifted, limits)).toMatchObject({ allowed: true });
    await store.close();
  });
});
