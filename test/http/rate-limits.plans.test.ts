import { describe, expect, it } from 'vitest';
import { call, type TestServer, useServer } from '../helpers/test-server.js';
import { parseRateLimitHeader, xRateLimit } from '../helpers/rate-limit-headers.js';

/** For the tests that send hundreds of requests, on a busy machine (PostgreSQL + Redis). */
const MANY_REQUESTS_MS = 90_000;

const server = useServer();

const list = (key: string) => call(server(), 'GET', '/v1/pets?limit=1', { key });

/**
 * Requests `send` keeps in flight. Its requests fill a window up to its limit, so which of them
 * is counted first changes nothing; a request after `send` resolves comes after all of them. The
 * exact count under concurrency has a test of its own below.
 */
const IN_FLIGHT = 8;

/** Sends `count` requests, IN_FLIGHT at a time, and returns their statuses in the order sent. */
async function send(key: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      statuses[i] = (await list(key)).status;
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, count) }, worker));
  return statuses;
}

function at(s: TestServer, iso: string): number {
  const when = Date.parse(iso);
  s.clock.set(when);
  return when;
}

describe('plan limits over fixed UTC windows', () => {
  it(
    'allows 60 requests a minute on the free plan, refuses the 61st, and allows 60 again the next minute',
    async () => {
      const s = server();
      const start = at(s, '2026-11-23T09:30:00Z');
      const { key } = await s.createKey('free');
      for (let i = 1; i <= 60; i++) {
        const res = await list(key);
        expect(res.status).toBe(200);
        expect(xRateLimit(res.headers)).toEqual({
          limit: 60,
          remaining: 60 - i,
          reset: (start + 60_000) / 1000,
        });
      }
      s.clock.advance(19_500);
      const refused = await list(key);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({
        code: 'rate_limited',
        message: expect.stringMatching(/60 requests per minute.*retry after 41 seconds/),
        status: 429,
      });
      expect(refused.headers.get('content-type')).toMatch(/^application\/json/);
      expect(refused.headers.get('retry-after')).toBe('41');
      expect(xRateLimit(refused.headers)).toEqual({
        limit: 60,
        remaining: 0,
        reset: (start + 60_000) / 1000,
      });

      at(s, '2026-11-23T09:31:00Z');
      expect(await send(key, 60)).toEqual(Array<number>(60).fill(200));
      expect((await list(key)).status).toBe(429);
    },
    MANY_REQUESTS_MS,
  );

  it(
    'refuses the 1,001st request of a day until 00:00 UTC, with headers describing the day window',
    async () => {
      const s = server();
      const { key } = await s.createKey('free');
      const dayStart = Date.parse('2026-11-24T00:00:00Z');
      // 16 full minutes (960 requests), then 40 more: the day's 1,000.
      for (let minute = 0; minute < 17; minute++) {
        s.clock.set(Date.parse('2026-11-23T20:00:00Z') + minute * 60_000);
        const statuses = await send(key, minute < 16 ? 60 : 40);
        expect(statuses.every((status) => status === 200)).toBe(true);
      }
      s.clock.advance(30_000);
      const refused = await list(key);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: 'rate_limited', status: 429 });
      expect((refused.body as { message: string }).message).toMatch(/1000 requests per day/);
      const secondsToMidnight = (dayStart - s.clock.now()) / 1000;
      expect(refused.headers.get('retry-after')).toBe(String(secondsToMidnight));
      expect(xRateLimit(refused.headers)).toEqual({
        limit: 1000,
        remaining: 0,
        reset: dayStart / 1000,
      });
      // The minute window still had 20 left, and the refusal took none of them.
      expect(parseRateLimitHeader(refused.headers.get('ratelimit'))).toEqual({
        minute: { r: 20, t: 30 },
        day: { r: 0, t: secondsToMidnight },
      });
      expect(refused.headers.get('ratelimit-policy')).toBe(
        '"minute";q=60;w=60, "day";q=1000;w=86400',
      );

      s.clock.set(dayStart);
      const nextDay = await list(key);
      expect(nextDay.status).toBe(200);
      expect(parseRateLimitHeader(nextDay.headers.get('ratelimit'))).toEqual({
        minute: { r: 59, t: 60 },
        day: { r: 999, t: 86_400 },
      });
    },
    MANY_REQUESTS_MS,
  );

  it(
    'does not count a request refused by the minute window against the day',
    async () => {
      const s = server();
      at(s, '2026-11-23T10:00:00Z');
      const { key } = await s.createKey('free');
      await send(key, 60);
      for (let i = 0; i < 5; i++) {
        const refused = await list(key);
        expect(refused.status).toBe(429);
        expect(parseRateLimitHeader(refused.headers.get('ratelimit')).day?.r).toBe(940);
      }
      at(s, '2026-11-23T10:01:00Z');
      const next = await list(key);
      expect(next.status).toBe(200);
      expect(parseRateLimitHeader(next.headers.get('ratelimit')).day?.r).toBe(939);
    },
    MANY_REQUESTS_MS,
  );

  it('counts exactly: of 200 concurrent requests on a fresh free key, exactly 60 succeed', async () => {
    const s = server();
    at(s, '2026-11-23T11:00:00Z');
    const { key } = await s.createKey('free');
    const responses = await Promise.all(Array.from({ length: 200 }, () => list(key)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(60);
    expect(statuses.filter((status) => status === 429)).toHaveLength(140);
    const remaining = responses
      .filter((r) => r.status === 200)
      .map((r) => Number(r.headers.get('x-ratelimit-remaining')))
      .sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => i));
  });

  it.each([
    ['pro', 300, 10_000],
    ['business', 1_000, 100_000],
  ] as const)(
    'gives the %s plan %i a minute and %i a day',
    async (plan, perMinute, perDay) => {
      const s = server();
      at(s, '2026-11-23T12:00:00Z');
      const { key } = await s.createKey(plan);
      const first = await list(key);
      expect(first.headers.get('ratelimit-policy')).toBe(
        `"minute";q=${perMinute};w=60, "day";q=${perDay};w=86400`,
      );
      expect(xRateLimit(first.headers)).toMatchObject({
        limit: perMinute,
        remaining: perMinute - 1,
      });
      expect(await send(key, perMinute - 1)).toEqual(Array<number>(perMinute - 1).fill(200));
      expect((await list(key)).status).toBe(429);
    },
    MANY_REQUESTS_MS,
  );

  it("applies an enterprise key's own limits", async () => {
    const s = server();
    const start = at(s, '2026-11-23T13:00:00Z');
    const { key } = await s.createKey('enterprise', { perMinute: 5, perDay: 7 });
    const first = await list(key);
    expect(first.headers.get('ratelimit-policy')).toBe('"minute";q=5;w=60, "day";q=7;w=86400');
    expect(await send(key, 4)).toEqual([200, 200, 200, 200]);
    const minuteFull = await list(key);
    expect(minuteFull.status).toBe(429);
    expect(xRateLimit(minuteFull.headers)).toEqual({
      limit: 5,
      remaining: 0,
      reset: (start + 60_000) / 1000,
    });
    s.clock.advance(60_000);
    expect(await send(key, 2)).toEqual([200, 200]);
    // The day window now has the fewest left, so the X-RateLimit headers describe it.
    const dayFull = await list(key);
    expect(dayFull.status).toBe(429);
    expect(xRateLimit(dayFull.headers)).toEqual({
      limit: 7,
      remaining: 0,
      reset: Date.parse('2026-11-24T00:00:00Z') / 1000,
    });
  });

  it('keeps separate budgets for separate keys', async () => {
    const s = server();
    at(s, '2026-11-23T14:00:00Z');
    const first = await s.createKey('free');
    const second = await s.createKey('free');
    await send(first.key, 60);
    expect((await list(first.key)).status).toBe(429);
    expect((await list(second.key)).status).toBe(200);
  });
});
