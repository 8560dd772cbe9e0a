import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RedisConfig } from '../../src/config/config.js';
import { DependencyUnavailableError } from '../../src/domain/errors.js';
import type { ConsumeOutcome, LimitWindow } from '../../src/domain/ports.js';
import { RateLimiter } from '../../src/domain/rate-limits/rate-limiter.js';
import {
  createRedisRateLimitStore,
  type RedisRateLimitStore,
  type RedisRateLimitStoreOptions,
} from '../../src/storage/redis/redis-rate-limit-store.js';
import { adminClient, eventually, PrivateRedis, testRedisConfig } from '../helpers/redis.js';
import { requireService } from '../helpers/services.js';
import { TestClock } from '../helpers/test-clock.js';
import { MINUTE_MS, minuteWithRoom } from '../helpers/minute.js';

/*
 * Leases (issue 20 item 1), one clock (issue 19 item 8) and a Redis restart (issue 19 item 6),
 * on a redis-server of this file's own, so its script counts and its restarts are the test's alone.
 */
const SUITE = 'RedisRateLimitStore leases, clock and restart';
const DAY = 86_400_000;
const T0 = Date.parse('2026-11-23T12:00:10Z');
const windows = (perMinute: number, perDay: number): LimitWindow[] => [
  { name: 'minute', limit: perMinute, lengthMs: MINUTE_MS },
  { name: 'day', limit: perDay, lengthMs: DAY },
];
const subject = () => `key:${randomUUID()}`;
const BANS = { after: 2, durationMs: 60_000 };
const allowed = (outcomes: ConsumeOutcome[]) => outcomes.filter((o) => o.kind === 'allowed');

if (await requireService('redis', SUITE)) {
  describe(SUITE, () => {
    let redis: PrivateRedis;
    let config: RedisConfig;
    const opened: RedisRateLimitStore[] = [];
    const open = async (options: RedisRateLimitStoreOptions = {}) => {
      const store = await createRedisRateLimitStore(config, {}, options);
      opened.push(store);
      return store;
    };
    const scriptCalls = async () => {
      const admin = adminClient(redis.url);
      try {
        const stats = await admin.info('commandstats');
        return [...stats.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)].reduce(
          (sum, m) => sum + Number(m[1]),
          0,
        );
      } finally {
        admin.disconnect();
      }
    };

    beforeAll(async () => {
      redis = await PrivateRedis.start();
      config = testRedisConfig({ url: redis.url });
    });
    // Each test's stores are closed after it: an open store gives idle leases back on a timer,
    // and a script it runs then would be counted by the next test's scriptCalls().
    afterEach(async () => {
      await Promise.allSettled(opened.splice(0).map((store) => store.close()));
    });
    afterAll(async () => {
      await redis?.kill();
    });

    describe('one clock: Redis TIME, whatever the instances say', () => {
      it('counts instances whose clocks are 30 s behind and 45 s ahead in one window', async () => {
        await minuteWithRoom(5_000);
        const behind = new RateLimiter(
          await open({ time: 'redis' }),
          new TestClock(Date.now() - 30_000),
          BANS,
        );
        const ahead = new RateLimiter(
          await open({ time: 'redis' }),
          new TestClock(Date.now() + 45_000),
          BANS,
        );
        const address = `192.0.2.${Math.floor(Math.random() * 250)}`;
        const decisions = [];
        for (let i = 0; i < 20; i++) {
          decisions.push(await behind.hitAddress(address), await ahead.hitAddress(address));
        }
        // One counter: the address budget of 30 a minute, not 30 per clock's minute.
        expect(decisions.filter((d) => d.allowed)).toHaveLength(30);
        // Both describe the window on the shared clock: it resets at the real minute's end.
        const end = (Math.floor(Date.now() / MINUTE_MS) + 1) * MINUTE_MS;
        for (const d of decisions) expect(d.inForce.resetAt).toBe(end);
      });

      it('does not end a ban early on an instance whose clock runs ahead', async () => {
        const banning = await open({ time: 'redis' });
        const ahead = await open({ time: 'redis' });
        const who = subject();
        const ban = { after: 0, durationMs: 60_000 };
        const request = { subject: who, windows: windows(1, 100), now: Date.now(), ban };
        const kinds = [];
        for (let i = 0; i < 3; i++) kinds.push((await banning.consume(request)).kind);
        expect(kinds).toEqual(['allowed', 'limited', 'banned']);
        // A clock two minutes ahead would see this ban over; Redis's does not.
        await expect(
          ahead.consume({ ...request, now: Date.now() + 120_000 }),
        ).resolves.toMatchObject({ kind: 'banned', started: false });
      });

      it('lifts a ban from a host whose clock is an hour behind', async () => {
        const serving = await open({ time: 'redis' });
        const unbanning = new RateLimiter(
          await open({ time: 'redis' }),
          new TestClock(Date.now() - 3_600_000),
          BANS,
        );
        const keyId = randomUUID();
        const ban = { after: 0, durationMs: 600_000 };
        const request = { subject: `key:${keyId}`, windows: windows(1, 100), now: Date.now(), ban };
        for (let i = 0; i < 3; i++) await serving.consume(request);
        await expect(serving.consume(request)).resolves.toMatchObject({ kind: 'banned' });
        await unbanning.liftBan(keyId);
        // The unban's key-change notice makes the serving instance drop the ban it knew of.
        await serving.forget(`key:${keyId}`);
        await expect(serving.consume(request)).resolves.toMatchObject({ kind: 'limited' });
      });
    });

    describe('leases', () => {
      it('serves a high limit with far fewer script runs than requests, and a small one with one each', async () => {
        const store = await open();
        const high = subject();
        const before = await scriptCalls();
        for (let i = 0; i < 2_000; i++) {
          await store.consume({ subject: high, windows: windows(1_000_000, 10_000_000), now: T0 });
        }
        const highCalls = (await scriptCalls()) - before;
        const small = subject();
        for (let i = 0; i < 60; i++) {
          await store.consume({ subject: small, windows: windows(60, 1_000), now: T0 });
        }
        const smallCalls = (await scriptCalls()) - before - highCalls;
        console.info(`[leases] 2,000 requests: ${highCalls} script runs; 60 free: ${smallCalls}`);
        expect(highCalls).toBeLessThan(100);
        expect(smallCalls).toBe(60);
      });

      it('never grants a 10,000 limit past it across three instances hammering it at once', async () => {
        const stores = await Promise.all([open(), open(), open()]);
        const who = subject();
        const w = windows(10_000, 1_000_000);
        const outcomes: ConsumeOutcome[] = [];
        // Three instances, each with 50 requests in flight, 14,000 requests in all.
        await Promise.all(
          stores.flatMap((store) =>
            Array.from({ length: 50 }, async () => {
              for (let i = 0; i < 4_000 / 50 + 14; i++) {
                outcomes.push(await store.consume({ subject: who, windows: w, now: T0 }));
              }
            }),
          ),
        );
        const granted = allowed(outcomes).length;
        const [minute] = await (stores[0] as RedisRateLimitStore).peek(who, w, T0);
        console.info(
          `[leases] 10,000 a minute, 3 instances, ${outcomes.length} requests: ${granted} allowed; counted ${minute}`,
        );
        expect(granted).toBeLessThanOrEqual(10_000);
        // What the instances hold unspent at the end is at most three leases of 1% of the limit.
        expect(granted).toBeGreaterThanOrEqual(10_000 - 3 * 100);
      });

      it('gives unspent quota back when an instance closes or forgets a subject', async () => {
        const [a, b, c] = await Promise.all([open(), open(), open()]);
        if (!a || !b || !c) throw new Error('no store');
        const who = subject();
        const w = windows(100_000, 1_000_000);
        for (let i = 0; i < 500; i++) await a.consume({ subject: who, windows: w, now: T0 });
        // B sees A's unspent lease as counted...
        const [held] = await b.peek(who, w, T0);
        expect(held).toBeGreaterThan(500);
        await a.close();
        // ...until A gives it back on closing.
        await expect(b.peek(who, w, T0)).resolves.toEqual([500, 500]);
        for (let i = 0; i < 300; i++) await c.consume({ subject: who, windows: w, now: T0 });
        await c.forget(who);
        await expect(b.peek(who, w, T0)).resolves.toEqual([800, 800]);
      });

      it('gives a lease held across the minute back to the day: the day counts what was served', async () => {
        const store = await open();
        const who = subject();
        const w = windows(10_000, 1_000_000);
        let served = 0;
        // A lease of several requests is held when the clock crosses into the next minute.
        for (let i = 0; i < 50; i++) {
          const outcome = await store.consume({ subject: who, windows: w, now: T0 });
          if (outcome.kind === 'allowed') served += 1;
        }
        const [, heldDay] = await store.peek(who, w, T0);
        expect(heldDay).toBe(served);
        const next = T0 + MINUTE_MS;
        for (let i = 0; i < 10; i++) {
          const outcome = await store.consume({ subject: who, windows: w, now: next });
          if (outcome.kind === 'allowed') served += 1;
        }
        // The old minute's unspent part goes back to the day (on a call of its own).
        await eventually('the day counts only what was served', async () => {
          const [minute, day] = await store.peek(who, w, next);
          return minute === 10 && day === served;
        });
        await store.close();
        const other = await open();
        await expect(other.peek(who, w, next)).resolves.toEqual([10, served]);
      });

      it('keeps a ban locally: no script runs for a banned key until the ban ends', async () => {
        const store = await open();
        const who = subject();
        const ban = { after: 0, durationMs: 60_000 };
        const request = { subject: who, windows: windows(1, 100), now: T0, ban };
        for (let i = 0; i < 3; i++) await store.consume(request);
        const before = await scriptCalls();
        for (let i = 0; i < 100; i++) {
          await expect(store.consume(request)).resolves.toMatchObject({ kind: 'banned' });
        }
        expect((await scriptCalls()) - before).toBe(0);
        await expect(store.consume({ ...request, now: T0 + 60_000 })).resolves.toMatchObject({
          kind: 'allowed',
        });
      });

      // Redis CPU per request is measured by `npm run bench:leases`; here, what makes it small:
      // a high-limit key's requests are served from leases, not one script run each.
      it('runs at most one script per 100 requests of a high-limit key', async () => {
        const store = await open({ time: 'redis' });
        const who = subject();
        const limits = windows(1_000_000_000, 1_000_000_000);
        const before = await scriptCalls();
        await Promise.all(
          Array.from({ length: 50 }, async () => {
            for (let i = 0; i < 200; i++) {
              await store.consume({ subject: who, windows: limits, now: 0 });
            }
          }),
        );
        expect((await scriptCalls()) - before).toBeLessThanOrEqual(10_000 / 100);
      });
    });

    describe('keys a script touches', () => {
      /**
       * Every key a script reads or writes is one its call declared in KEYS, as managed and proxy
       * Redis (and Redis Cluster's routing) require: MONITOR shows each EVALSHA with its keys and
       * each command the script ran.
       */
      it('declares in KEYS every key the scripts touch, across a window and on both clocks', async () => {
        const monitor = await adminClient(redis.url).monitor();
        const declared = new Set<string>();
        const touched: string[] = [];
        monitor.on('monitor', (_time: string, args: string[], source: string) => {
          const [command, ...rest] = args.map(String);
          const name = command?.toLowerCase();
          if ((name === 'evalsha' || name === 'eval') && rest.length >= 2) {
            const count = Number(rest[1]);
            for (const key of rest.slice(2, 2 + count)) declared.add(key);
          } else if (source === 'lua' && name !== 'time' && rest[0] !== undefined) {
            touched.push(rest[0]);
          }
        });
        const seen = async () => {
          // MONITOR's lines arrive on a connection of their own: a PING after the calls marks the end.
          const marker = `marker:${randomUUID()}`;
          const admin = adminClient(redis.url);
          const arrived = new Promise<void>((resolve) =>
            monitor.on('monitor', (_t: string, args: string[]) => {
              if (args.map(String).includes(marker)) resolve();
            }),
          );
          await admin.echo(marker);
          admin.disconnect();
          await arrived;
        };
        try {
          for (const time of ['caller', 'redis'] as const) {
            const store = await open({ time });
            const w = windows(10_000, 1_000_000);
            const who = subject();
            const at = time === 'caller' ? T0 : Date.now();
            for (let i = 0; i < 30; i++) await store.consume({ subject: who, windows: w, now: at });
            await store.consume({ subject: who, windows: w, now: at + MINUTE_MS });
            await store.peek(who, w, at);
            const ban = { after: 0, durationMs: 60_000 };
            const small = { subject: subject(), windows: windows(1, 100), now: at, ban };
            for (let i = 0; i < 3; i++) await store.consume(small);
            await store.lift(small.subject);
            await store.forget(who);
            await store.close();
          }
          await seen();
        } finally {
          monitor.disconnect();
        }
        expect(touched.length).toBeGreaterThan(10);
        expect(touched.filter((key) => !declared.has(key))).toEqual([]);
      });
    });

    describe('an estimate of Redis clock that is off', () => {
      it('asks again with the corrected estimate when the window the script finds was not declared', async () => {
        const store = await open({ time: 'redis' });
        // As a host whose clock is five minutes ahead estimates Redis's before its first answer.
        const skewed = store as unknown as { offset: number };
        skewed.offset += 5 * MINUTE_MS;
        const who = subject();
        const w = windows(60, 1_000);
        await expect(store.consume({ subject: who, windows: w, now: 0 })).resolves.toMatchObject({
          kind: 'allowed',
          used: [1, 1],
        });
        // Corrected by the script's answer.
        expect(Math.abs((store.sharedTime ?? 0) - Date.now())).toBeLessThan(MINUTE_MS);
        // Five minutes behind now: a peek asks again too.
        skewed.offset -= 5 * MINUTE_MS;
        await expect(store.peek(who, w, 0)).resolves.toEqual([1, 1]);
      });
    });

    describe('failing closed', () => {
      it('spends no lease once Redis has not answered for 250 ms', async () => {
        const store = await open();
        const who = subject();
        const request = { subject: who, windows: windows(1_000_000, 10_000_000), now: T0 };
        for (let i = 0; i < 100; i++) await store.consume(request);
        // The lease holds more, but Redis stops answering...
        redis.pause();
        try {
          await new Promise((r) => setTimeout(r, 300));
          await expect(store.consume(request)).rejects.toBeInstanceOf(DependencyUnavailableError);
        } finally {
          redis.resume();
        }
        await expect(store.consume(request)).resolves.toMatchObject({ kind: 'allowed' });
      });
    });

    describe('a Redis restart without its data', () => {
      it('grants a 60-a-minute key no more than 60 in the minute Redis restarted', async () => {
        await minuteWithRoom(10_000);
        const [a, b] = [await open({ time: 'redis' }), await open({ time: 'redis' })];
        if (!a || !b) throw new Error('no store');
        const who = subject();
        const request = { subject: who, windows: windows(60, 1_000), now: 0 };
        const outcomes: ConsumeOutcome[] = [];
        for (let i = 0; i < 20; i++) outcomes.push(await a.consume(request));
        for (let i = 0; i < 20; i++) outcomes.push(await b.consume(request));
        await redis.stop();
        await redis.start();
        await eventually('both stores answer again', async () => {
          await Promise.all([a.ping(), b.ping()]);
          return true;
        });
        // A knew of 20 when Redis lost the count, B of 40: the window goes on from 40.
        for (let i = 0; i < 40; i++) {
          outcomes.push(await a.consume(request), await b.consume(request));
        }
        const granted = allowed(outcomes).length;
        console.info(`[restart] 60 a minute, Redis restarted after 40: ${granted} allowed in all`);
        expect(granted).toBe(60);
        await expect(a.peek(who, request.windows, 0)).resolves.toEqual([60, 60]);
      });
    });
  });
}
