import { beforeEach, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domain/api-keys/key-format.js';
import type { Storage } from '../../src/domain/ports.js';
import { call, type TestServer, useServer } from '../helpers/test-server.js';
import { expectRateLimitHeaders, xRateLimit } from '../helpers/rate-limit-headers.js';
import { overlayStorage } from '../helpers/storage-overlay.js';

const reads = { findByHash: 0, hashesAfter: 0 };

/** Counts the key reads the app makes, to show which requests reach storage. */
function countingStorage(storage: Storage): Storage {
  const { apiKeys } = storage;
  return overlayStorage(storage, {
    apiKeys: {
      findByHash: (hash) => {
        reads.findByHash += 1;
        return apiKeys.findByHash(hash);
      },
      hashesAfter: (from) => {
        reads.hashesAfter += 1;
        return apiKeys.hashesAfter(from);
      },
    },
  });
}

const server = useServer({ wrapStorage: countingStorage });
let minute = Date.parse('2026-11-23T07:00:00Z');

beforeEach(() => {
  // Each test starts a fresh minute, so each starts with the whole budget of its address.
  minute += 10 * 60_000;
  server().clock.set(minute);
});

const anonymous = (s: TestServer, headers: Record<string, string> = {}) =>
  call(s, 'GET', '/v1/pets', { headers });

describe('the budget of requests without a valid key, per client address', () => {
  it('answers 30 such requests a minute with 401, then 429 until the minute ends', async () => {
    const s = server();
    for (let i = 1; i <= 30; i++) {
      const res = await anonymous(s);
      expect(res.status).toBe(401);
      expectRateLimitHeaders(res.headers);
      expect(xRateLimit(res.headers)).toEqual({
        limit: 30,
        remaining: 30 - i,
        reset: (minute + 60_000) / 1000,
      });
    }
    s.clock.advance(45_000);
    const refused = await anonymous(s);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      code: 'rate_limited',
      message: expect.stringMatching(/without a valid API key.*retry after 15 seconds/),
      status: 429,
    });
    expect(refused.headers.get('retry-after')).toBe('15');
    expect(refused.headers.get('ratelimit-policy')).toBe('"minute";q=30;w=60');
    expect(refused.headers.get('ratelimit')).toBe('"minute";r=0;t=15');
    s.clock.advance(15_000);
    expect((await anonymous(s)).status).toBe(401);
  });

  it('counts missing, malformed, unknown and revoked keys alike', async () => {
    const s = server();
    const { id, key } = await s.createKey();
    await s.revokeKey(id);
    const kinds: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer nope' },
      { authorization: `Bearer ${generateApiKey('production')}` },
      { authorization: `Bearer ${key}` },
    ];
    for (let i = 0; i < 30; i++) {
      expect((await anonymous(s, kinds[i % kinds.length])).status).toBe(401);
    }
    for (const headers of kinds) expect((await anonymous(s, headers)).status).toBe(429);
  });

  it('refuses past the budget before any key lookup', async () => {
    const s = server();
    const before = { ...reads };
    const started = performance.now();
    for (let i = 0; i < 30; i++) {
      const res = await anonymous(s, { authorization: `Bearer ${generateApiKey('production')}` });
      expect(res.status).toBe(401);
    }
    expect(reads.findByHash - before.findByHash).toBe(30);
    for (let i = 0; i < 10; i++) {
      const res = await anonymous(s, { authorization: `Bearer ${generateApiKey('production')}` });
      expect(res.status).toBe(429);
    }
    // No key was looked up: at most one small query for keys created lately, per 100 ms.
    expect(reads.findByHash - before.findByHash).toBe(30);
    expect(reads.hashesAfter - before.hashesAfter).toBeLessThanOrEqual(
      Math.ceil((performance.now() - started) / 100) + 1,
    );
  });

  it('does not limit requests with a valid key from an address over its budget', async () => {
    const s = server();
    for (let i = 0; i < 31; i++) await anonymous(s);
    expect((await anonymous(s)).status).toBe(429);
    const { key } = await s.createKey('free'); // never used before, on this server or any
    const res = await call(s, 'GET', '/v1/pets', { key });
    expect(res.status).toBe(200);
    expect(xRateLimit(res.headers)).toMatchObject({ limit: 60, remaining: 59 });
  });

  it('does not count requests with a valid key against the address', async () => {
    const s = server();
    const { key } = await s.createKey('pro');
    for (let i = 0; i < 40; i++)
      expect((await call(s, 'GET', '/v1/pets', { key })).status).toBe(200);
    const res = await anonymous(s);
    expect(res.status).toBe(401);
    expect(xRateLimit(res.headers).remaining).toBe(29);
  });

  it('counts GET /v1/openapi.json, public as it is, against the same budget', async () => {
    const s = server();
    for (let i = 1; i <= 20; i++) {
      const res = await call(s, 'GET', '/v1/openapi.json');
      expect(res.status).toBe(200);
      expect(xRateLimit(res.headers).remaining).toBe(30 - i);
    }
    for (let i = 0; i < 10; i++) expect((await anonymous(s)).status).toBe(401);
    const document = await call(s, 'GET', '/v1/openapi.json');
    expect(document.status).toBe(429);
    expect(document.body).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(document.headers.get('retry-after')).toBe('60');
  });

  it('ignores X-Forwarded-For unless TRUST_PROXY is set', async () => {
    const s = server();
    for (let i = 0; i < 30; i++) {
      expect((await anonymous(s, { 'x-forwarded-for': `203.0.113.${i}` })).status).toBe(401);
    }
    expect((await anonymous(s, { 'x-forwarded-for': '203.0.113.200' })).status).toBe(429);
  });
});

describe('client addresses behind a trusted proxy', () => {
  const proxied = useServer({ env: { TRUST_PROXY: 'true' } });

  it('gives each forwarded IPv4 address its own budget', async () => {
    const s = proxied();
    s.clock.set(Date.parse('2026-11-23T06:00:00Z'));
    for (let i = 0; i < 30; i++) {
      expect((await anonymous(s, { 'x-forwarded-for': '198.51.100.7' })).status).toBe(401);
    }
    expect((await anonymous(s, { 'x-forwarded-for': '198.51.100.7' })).status).toBe(429);
    expect((await anonymous(s, { 'x-forwarded-for': '198.51.100.8' })).status).toBe(401);
  });

  it('counts IPv6 addresses by their /64', async () => {
    const s = proxied();
    s.clock.set(Date.parse('2026-11-23T06:01:00Z'));
    for (let i = 0; i < 30; i++) {
      const address = `2001:db8:1:2:${i.toString(16)}::${i + 1}`;
      expect((await anonymous(s, { 'x-forwarded-for': address })).status).toBe(401);
    }
    const sameNetwork = await anonymous(s, { 'x-forwarded-for': '2001:db8:1:2:ffff::1' });
    expect(sameNetwork.status).toBe(429);
    const otherNetwork = await anonymous(s, { 'x-forwarded-for': '2001:db8:1:3::1' });
    expect(otherNetwork.status).toBe(401);
  });

  it('counts a made-up key with a different valid forwarded IP each against each IP: the operator trusts the proxy to write the header', async () => {
    const s = proxied();
    s.clock.set(Date.parse('2026-11-23T06:02:00Z'));
    const guess = { authorization: `Bearer ${generateApiKey('production')}` };
    for (let i = 0; i < 60; i++) {
      const forwarded = { ...guess, 'x-forwarded-for': `192.0.2.${i}` };
      expect((await anonymous(s, forwarded)).status).toBe(401);
    }
  });

  let junkMinute = Date.parse('2026-11-23T07:00:00Z');
  it.each([
    ['a made-up word', (i: number) => `client-${i}`],
    ['an IPv4 address with a port', (i: number) => `192.0.2.${i}:8080`],
    // Under Node's 16 KiB header limit, which answers 431 to more.
    ['12 KB of text', (i: number) => `${'a'.repeat(12 * 1024)}${i}`],
    ['an IPv6 address with a 12 KB zone', (i: number) => `fe80::${i}%${'z'.repeat(12 * 1024)}`],
    ['an out-of-range IPv4 address', (i: number) => `999.0.0.${i}`],
  ])(
    'counts %s in X-Forwarded-For against the connection own address: 429 after 30',
    async (_name, forwardedFor) => {
      const s = proxied();
      // A minute of its own for each case, so each starts with the connection's whole budget.
      junkMinute += 60_000;
      s.clock.set(junkMinute);
      const guess = { authorization: `Bearer ${generateApiKey('production')}` };
      for (let i = 0; i < 30; i++) {
        const res = await anonymous(s, { ...guess, 'x-forwarded-for': forwardedFor(i) });
        expect(res.status).toBe(401);
      }
      const refused = await anonymous(s, { ...guess, 'x-forwarded-for': forwardedFor(30) });
      expect(refused.status).toBe(429);
      // The same budget as the connection's own, without the header.
      expect((await anonymous(s)).status).toBe(429);
    },
  );
});
