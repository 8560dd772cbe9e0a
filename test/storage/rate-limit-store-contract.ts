import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LimitWindow, RateLimitStore } from '../../src/domain/ports.js';

const MINUTE = 60_000;
const DAY = 86_400_000;
const T0 = Date.parse('2026-11-23T12:00:00Z');
const windows = (perMinute: number, perDay: number): LimitWindow[] => [
  { name: 'minute', limit: perMinute, lengthMs: MINUTE },
  { name: 'day', limit: perDay, lengthMs: DAY },
];
const subject = () => `key:${randomUUID()}`;

/**
 * What every rate-limit store must do, run against each backend (memory now; Redis shares it).
 * Times are passed in, so no test waits.
 */
export function describeRateLimitStoreContract(
  name: string,
  open: () => Promise<RateLimitStore>,
): void {
  describe(`RateLimitStore contract: ${name}`, () => {
    let store: RateLimitStore;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store.close();
    });

    const consume = (
      who: string,
      w: LimitWindow[],
      now: number,
      ban?: { after: number; durationMs: number },
    ) => store.consume({ subject: who, windows: w, now, ...(ban ? { ban } : {}) });

    it('counts each allowed request in every window and says how many each has counted', async () => {
      const who = subject();
      await expect(consume(who, windows(3, 10), T0)).resolves.toEqual({
        kind: 'allowed',
        used: [1, 1],
      });
      await expect(consume(who, windows(3, 10), T0 + 1)).resolves.toEqual({
        kind: 'allowed',
        used: [2, 2],
      });
    });

    it('refuses when a window is full and then counts in no window', async () => {
      const who = subject();
      for (let i = 0; i < 2; i++) await consume(who, windows(2, 10), T0);
      await expect(consume(who, windows(2, 10), T0 + 5)).resolves.toEqual({
        kind: 'limited',
        used: [2, 2],
        refused: [0],
      });
      await expect(store.peek(who, windows(2, 10), T0 + 5)).resolves.toEqual([2, 2]);
    });

    it('names every full window', async () => {
      const who = subject();
      await consume(who, windows(1, 1), T0);
      await expect(consume(who, windows(1, 1), T0)).resolves.toMatchObject({ refused: [0, 1] });
    });

    it('starts each window over at its UTC boundary, and the day only at midnight', async () => {
      const who = subject();
      const w = windows(1, 3);
      const late = Date.parse('2026-11-23T23:59:59.999Z');
      await expect(consume(who, w, late - MINUTE)).resolves.toMatchObject({ kind: 'allowed' });
      await expect(consume(who, w, late)).resolves.toEqual({ kind: 'allowed', used: [1, 2] });
      await expect(consume(who, w, late)).resolves.toMatchObject({ kind: 'limited', refused: [0] });
      const midnight = late + 1;
      await expect(consume(who, w, midnight)).resolves.toEqual({ kind: 'allowed', used: [1, 1] });
    });

    it('counts nothing on peek', async () => {
      const who = subject();
      await expect(store.peek(who, windows(5, 5), T0)).resolves.toEqual([0, 0]);
      await consume(who, windows(5, 5), T0);
      await store.peek(who, windows(5, 5), T0);
      await expect(store.peek(who, windows(5, 5), T0)).resolves.toEqual([1, 1]);
      await expect(store.peek(who, windows(5, 5), T0 + MINUTE)).resolves.toEqual([0, 1]);
    });

    it('keeps subjects apart', async () => {
      const a = subject();
      const b = subject();
      await consume(a, windows(1, 5), T0);
      await expect(consume(b, windows(1, 5), T0)).resolves.toMatchObject({ kind: 'allowed' });
    });

    it('is exact under concurrency: 200 concurrent requests against a limit of 60 allow 60', async () => {
      const who = subject();
      const outcomes = await Promise.all(
        Array.from({ length: 200 }, () => consume(who, windows(60, 1000), T0)),
      );
      expect(outcomes.filter((o) => o.kind === 'allowed')).toHaveLength(60);
      await expect(store.peek(who, windows(60, 1000), T0)).resolves.toEqual([60, 60]);
    });

    it('counts a high limit exactly, request by request, as one instance sees it', async () => {
      const who = subject();
      const w = windows(10_000, 100_000);
      for (let i = 1; i <= 500; i++) {
        const outcome = await consume(who, w, T0 + i);
        expect(outcome).toEqual({ kind: 'allowed', used: [i, i] });
      }
      await expect(store.peek(who, w, T0 + 600)).resolves.toEqual([500, 500]);
    });

    it('grants a high limit exactly up to it under concurrency, and refuses past it', async () => {
      const who = subject();
      const w = windows(1_000, 100_000);
      const outcomes = await Promise.all(
        Array.from({ length: 1_200 }, (_, i) => consume(who, w, T0 + (i % 50))),
      );
      const allowed = outcomes.filter((o) => o.kind === 'allowed');
      expect(allowed).toHaveLength(1_000);
      expect(new Set(allowed.map((o) => o.used[0])).size).toBe(1_000);
      await expect(store.peek(who, w, T0 + 60)).resolves.toEqual([1_000, 1_000]);
    });

    describe('bans', () => {
      const ban = { after: 2, durationMs: 120_000 };

      async function fill(who: string, now: number) {
        await consume(who, windows(1, 100), now, ban);
      }

      it('starts a ban on the refusal that makes the refusals after the first exceed `after`', async () => {
        const who = subject();
        await fill(who, T0);
        const kinds = [];
        for (let i = 0; i < 4; i++)
          kinds.push((await consume(who, windows(1, 100), T0 + i, ban)).kind);
        expect(kinds).toEqual(['limited', 'limited', 'limited', 'banned']);
        const during = await consume(who, windows(1, 100), T0 + MINUTE, ban);
        expect(during).toEqual({
          kind: 'banned',
          used: [0, 1],
          ban: { startedAt: T0 + 3, until: T0 + 3 + 120_000 },
          started: false,
        });
      });

      it('reports started once, and ends the ban on time without extending it', async () => {
        const who = subject();
        await fill(who, T0);
        const outcomes = [];
        for (let i = 0; i < 6; i++)
          outcomes.push(await consume(who, windows(1, 100), T0 + 10, ban));
        expect(outcomes.filter((o) => o.kind === 'banned' && o.started)).toHaveLength(1);
        const until = T0 + 10 + 120_000;
        await expect(consume(who, windows(1, 100), until - 1, ban)).resolves.toMatchObject({
          kind: 'banned',
        });
        await expect(consume(who, windows(1, 100), until, ban)).resolves.toMatchObject({
          kind: 'allowed',
        });
      });

      it('counts refusals per window: those of a past minute do not add up to a ban', async () => {
        const who = subject();
        const kinds = [];
        for (const minute of [0, 1, 2]) {
          const now = T0 + minute * MINUTE;
          await fill(who, now);
          for (let i = 0; i < ban.after + 1; i++) {
            kinds.push((await consume(who, windows(1, 100), now + 1, ban)).kind);
          }
        }
        expect(kinds).toEqual(new Array(3 * (ban.after + 1)).fill('limited'));
      });

      it('counts no request during a ban, in any window', async () => {
        const who = subject();
        await fill(who, T0);
        for (let i = 0; i < 4; i++) await consume(who, windows(1, 100), T0 + 1, ban);
        for (let i = 0; i < 5; i++) {
          await expect(consume(who, windows(1, 100), T0 + MINUTE, ban)).resolves.toMatchObject({
            kind: 'banned',
            used: [0, 1],
          });
        }
        await expect(store.peek(who, windows(1, 100), T0 + MINUTE)).resolves.toEqual([0, 1]);
        await expect(consume(who, windows(1, 100), T0 + 1 + 120_000, ban)).resolves.toEqual({
          kind: 'allowed',
          used: [1, 2],
        });
      });

      it('starts exactly one ban when many refused requests arrive at once', async () => {
        const who = subject();
        await fill(who, T0);
        const outcomes = await Promise.all(
          Array.from({ length: 50 }, () => consume(who, windows(1, 100), T0 + 1, ban)),
        );
        expect(outcomes.filter((o) => o.kind === 'limited')).toHaveLength(ban.after + 1);
        expect(outcomes.filter((o) => o.kind === 'banned' && o.started)).toHaveLength(1);
        expect(outcomes.filter((o) => o.kind === 'banned' && !o.started)).toHaveLength(
          50 - ban.after - 2,
        );
      });

      it('changes nothing when lifting a subject that is not banned', async () => {
        const who = subject();
        await store.lift(subject(), T0);
        await fill(who, T0);
        await consume(who, windows(1, 100), T0, ban);
        await store.lift(who, T0 + 1);
        await expect(store.peek(who, windows(1, 100), T0)).resolves.toEqual([1, 1]);
        const kinds = [];
        for (let i = 0; i < 3; i++) kinds.push((await consume(who, windows(1, 100), T0, ban)).kind);
        // The refusal before the lift still counts: no ban was lifted, so nothing was forgiven.
        expect(kinds).toEqual(['limited', 'limited', 'banned']);
      });

      it('never bans without ban rules', async () => {
        const who = subject();
        await consume(who, windows(1, 100), T0);
        for (let i = 0; i < 20; i++) {
          await expect(consume(who, windows(1, 100), T0)).resolves.toMatchObject({
            kind: 'limited',
          });
        }
      });

      it('lifts a ban that started at or before the lift, forgetting the refusals counted', async () => {
        const who = subject();
        await fill(who, T0);
        for (let i = 0; i < 4; i++) await consume(who, windows(1, 100), T0 + 1, ban);
        await store.lift(who, T0 + 1);
        const again = [];
        for (let i = 0; i < 4; i++)
          again.push((await consume(who, windows(1, 100), T0 + 2, ban)).kind);
        expect(again).toEqual(['limited', 'limited', 'limited', 'banned']);
      });

      it('does not lift a ban that started after the lift', async () => {
        const who = subject();
        await fill(who, T0);
        for (let i = 0; i < 4; i++) await consume(who, windows(1, 100), T0 + 5_000, ban);
        await store.lift(who, T0 + 4_999);
        await expect(consume(who, windows(1, 100), T0 + 6_000, ban)).resolves.toMatchObject({
          kind: 'banned',
        });
      });
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
