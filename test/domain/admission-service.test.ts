import { afterEach, describe, expect, it } from 'vitest';
import {
  type AdmissionRequest,
  AdmissionService,
  AdmissionUnavailableError,
  type Credential,
} from '../../src/domain/admission/admission-service.js';
import { ApiKeyService } from '../../src/domain/api-keys/api-key-service.js';
import { generateApiKey } from '../../src/domain/api-keys/key-format.js';
import { KeyManagementService } from '../../src/domain/api-keys/key-management-service.js';
import { DependencyUnavailableError } from '../../src/domain/errors.js';
import type { RateLimitStore, Storage } from '../../src/domain/ports.js';
import { RateLimiter } from '../../src/domain/rate-limits/rate-limiter.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { MemoryRateLimitStore } from '../../src/storage/memory/memory-rate-limit-store.js';
import { TestClock } from '../helpers/test-clock.js';

// Ten seconds into a minute: a refused window resets in 50 seconds.
const T0 = Date.parse('2026-11-23T12:00:10Z');
const BAN = { after: 2, durationMs: 120_000 };
const ADDRESS = '203.0.113.7';
const ACTOR = { kind: 'cli', user: 'ops', host: 'test' } as const;

const opened: Storage[] = [];
afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close();
});

/** One instance's services over a key store and a rate-limit store (shared when given). */
function instance(storage: Storage, clock: TestClock, counters: RateLimitStore) {
  const apiKeys = new ApiKeyService(storage.apiKeys, clock, 'production');
  const limiter = new RateLimiter(counters, clock, BAN);
  const admission = new AdmissionService(apiKeys, limiter);
  const keys = new KeyManagementService(storage, apiKeys, limiter, clock, {
    usageRetentionDays: 90,
  });
  return { apiKeys, admission, keys };
}

async function setup() {
  const storage = await createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true });
  opened.push(storage);
  const clock = new TestClock(T0);
  const counters = new MemoryRateLimitStore(clock);
  return { storage, clock, counters, ...instance(storage, clock, counters) };
}

const bearer = (token: string): Credential => ({ kind: 'bearer', token });
const request = (credential: Credential, address = ADDRESS): AdmissionRequest => ({
  credential,
  address,
  operation: { access: 'api_key' },
});

describe('AdmissionService.admit', () => {
  it('admits a valid key with the state of its plan windows', async () => {
    const { apiKeys, admission } = await setup();
    const { record, key } = await apiKeys.create({ plan: 'free' });
    const decision = await admission.admit(request(bearer(key)));
    expect(decision).toMatchObject({ admitted: true, key: { id: record.id } });
    expect(decision.rate.windows.map((w) => [w.name, w.limit, w.remaining])).toEqual([
      ['minute', 60, 59],
      ['day', 1_000, 999],
    ]);
    expect(decision.rate.inForce).toMatchObject({ name: 'minute', remaining: 59 });
    expect(decision.rate.decidedAt).toBe(T0);
  });

  it('refuses each kind of invalid credential as unauthorized, on the address budget', async () => {
    const { apiKeys, admission, keys } = await setup();
    const revoked = await apiKeys.create({ plan: 'free' });
    await keys.revoke(revoked.record.id, ACTOR);
    const cases: Array<[Credential, unknown]> = [
      [{ kind: 'absent' }, { code: 'unauthorized', reason: 'missing' }],
      [{ kind: 'unreadable' }, { code: 'unauthorized', reason: 'malformed' }],
      [bearer('pa_live_short'), { code: 'unauthorized', reason: 'malformed' }],
      [bearer(generateApiKey('production')), { code: 'unauthorized', reason: 'unknown' }],
      [bearer(revoked.key), { code: 'unauthorized', reason: 'revoked' }],
      [{ kind: 'ambiguous' }, { code: 'ambiguous_credential' }],
    ];
    for (const [index, [credential, refusal]] of cases.entries()) {
      const decision = await admission.admit(request(credential));
      expect(decision).toEqual({ admitted: false, refusal, rate: expect.any(Object) });
      // Each drew on the address's 30 a minute.
      expect(decision.rate.inForce).toMatchObject({ limit: 30, remaining: 29 - index });
    }
  });

  it('refuses an address past its budget before looking a key up, and still admits valid keys', async () => {
    const { clock, apiKeys, admission } = await setup();
    const { key } = await apiKeys.create({ plan: 'free' });
    for (let i = 0; i < 30; i++) {
      expect(await admission.admit(request({ kind: 'absent' }))).toMatchObject({
        refusal: { code: 'unauthorized' },
      });
    }
    const over = await admission.admit(request(bearer(generateApiKey('production'))));
    expect(over).toEqual({
      admitted: false,
      refusal: {
        code: 'rate_limited',
        budget: 'address',
        window: expect.objectContaining({ name: 'minute', limit: 30, remaining: 0 }),
        retryAfterSeconds: 50,
      },
      rate: expect.objectContaining({ inForce: expect.objectContaining({ remaining: 0 }) }),
    });
    // Whatever else is wrong with the request, the spent budget answers first.
    for (const credential of [{ kind: 'absent' }, { kind: 'ambiguous' }] as const) {
      expect(await admission.admit(request(credential))).toMatchObject({
        refusal: { code: 'rate_limited', budget: 'address', retryAfterSeconds: 50 },
      });
    }
    expect(await admission.admit(request(bearer(key)))).toMatchObject({ admitted: true });
    // Another address has its own budget.
    expect(await admission.admit(request({ kind: 'absent' }, '203.0.113.8'))).toMatchObject({
      refusal: { code: 'unauthorized' },
    });
    clock.advance(50_000);
    expect(await admission.admit(request({ kind: 'absent' }))).toMatchObject({
      refusal: { code: 'unauthorized', reason: 'missing' },
    });
  });

  it('counts the open description of the API on the address budget, whatever the credential', async () => {
    const { apiKeys, admission } = await setup();
    const { key } = await apiKeys.create({ plan: 'free' });
    const open = { credential: bearer(key), address: ADDRESS, operation: { access: 'address' } };
    const decisions = [];
    for (let i = 0; i < 31; i++) decisions.push(await admission.admit(open as AdmissionRequest));
    expect(decisions[0]).toEqual({ admitted: true, rate: expect.any(Object) });
    expect(decisions[30]).toMatchObject({
      admitted: false,
      refusal: { code: 'rate_limited', budget: 'address' },
    });
  });

  it("refuses a key past its window with the window's facts, counting nothing", async () => {
    const { apiKeys, admission } = await setup();
    const { record, key } = await apiKeys.create({
      plan: 'enterprise',
      customLimits: { perMinute: 2, perDay: 100 },
    });
    await admission.admit(request(bearer(key)));
    await admission.admit(request(bearer(key)));
    const refused = await admission.admit(request(bearer(key)));
    expect(refused).toEqual({
      admitted: false,
      key: expect.objectContaining({ id: record.id }),
      refusal: {
        code: 'rate_limited',
        budget: 'key',
        window: expect.objectContaining({ name: 'minute', limit: 2, remaining: 0 }),
        retryAfterSeconds: 50,
      },
      rate: expect.any(Object),
    });
    // The refused request counted in neither window.
    expect(refused.rate.windows.find((w) => w.name === 'day')?.remaining).toBe(98);
  });

  it('starts a ban on the refusal past the tolerance, records it with the key, then keeps refusing', async () => {
    const { clock, storage, apiKeys, admission } = await setup();
    const { record, key } = await apiKeys.create({
      plan: 'enterprise',
      customLimits: { perMinute: 1, perDay: 100 },
    });
    await admission.admit(request(bearer(key)));
    // The first 429, then the two tolerated.
    for (let i = 0; i < 3; i++) {
      expect(await admission.admit(request(bearer(key)))).toMatchObject({
        refusal: { code: 'rate_limited', budget: 'key' },
      });
    }
    const starting = await admission.admit(request(bearer(key)));
    expect(starting).toMatchObject({
      admitted: false,
      key: { id: record.id },
      refusal: {
        code: 'api_key_banned',
        until: T0 + 120_000,
        retryAfterSeconds: 120,
        started: { recorded: true },
      },
    });
    expect((await storage.apiKeys.findById(record.id))?.bannedUntil).toBe(T0 + 120_000);

    clock.advance(60_000); // a fresh minute: without the ban the key would be admitted
    const banned = await admission.admit(request(bearer(key)));
    expect(banned).toMatchObject({
      refusal: { code: 'api_key_banned', until: T0 + 120_000, retryAfterSeconds: 60 },
    });
    expect(banned.admitted === false && banned.refusal).not.toHaveProperty('started');
    expect(banned.rate.inForce).toMatchObject({ remaining: 0, resetAt: T0 + 120_000 });
    clock.advance(60_000);
    expect(await admission.admit(request(bearer(key)))).toMatchObject({ admitted: true });
  });

  it('says so in the value when the durable copy of a ban cannot be stored; the ban holds', async () => {
    const { storage, clock, counters } = await setup();
    const failing = Object.create(storage.apiKeys) as typeof storage.apiKeys;
    failing.setBannedUntil = () => Promise.reject(new Error('disk full'));
    const { apiKeys, admission } = instance({ ...storage, apiKeys: failing }, clock, counters);
    const { key } = await apiKeys.create({
      plan: 'enterprise',
      customLimits: { perMinute: 1, perDay: 100 },
    });
    for (let i = 0; i < 4; i++) await admission.admit(request(bearer(key)));
    expect(await admission.admit(request(bearer(key)))).toMatchObject({
      refusal: { code: 'api_key_banned', started: { recorded: false, error: expect.any(Error) } },
    });
    expect(await admission.admit(request(bearer(key)))).toMatchObject({
      refusal: { code: 'api_key_banned' },
    });
  });

  it('counts calls to a deprecated operation per key, admitted or refused, and no others', async () => {
    const { storage, apiKeys, admission } = await setup();
    const { record, key } = await apiKeys.create({
      plan: 'enterprise',
      customLimits: { perMinute: 1, perDay: 100 },
    });
    const deprecated = {
      ...request(bearer(key)),
      operation: { access: 'api_key' as const, deprecated: true },
    };
    await admission.admit(request(bearer(key)));
    await admission.admit(deprecated);
    await admission.admit(deprecated);
    await admission.admit({ ...deprecated, credential: { kind: 'absent' } });
    await apiKeys.flushDeprecatedCalls();
    expect((await storage.apiKeys.findById(record.id))?.deprecatedCalls).toBe(2);
  });

  it('throws an outage, carrying the limits of the budget it could not read', async () => {
    const { storage, clock, counters } = await setup();
    const down = Object.create(counters) as RateLimitStore;
    // A store that must ask, and cannot: nothing leased here, Redis down.
    down.consumeNow = () => undefined;
    down.consume = () => Promise.reject(new DependencyUnavailableError('redis'));
    const { apiKeys, admission } = instance(storage, clock, down);
    const { key } = await apiKeys.create({ plan: 'pro' });
    const outage = await Promise.resolve(admission.admit(request(bearer(key)))).catch(
      (error: unknown) => error,
    );
    expect(outage).toBeInstanceOf(AdmissionUnavailableError);
    expect(outage).toMatchObject({
      dependency: 'redis',
      limits: { perMinute: 300, perDay: 10_000 },
    });
    const state = admission.unavailableState(outage as AdmissionUnavailableError, 5);
    expect(state.inForce).toMatchObject({ limit: 300, remaining: 0 });
  });
});

describe('AdmissionService.unban', () => {
  it('ends a live ban at once for every instance sharing the counters, whatever their key cache holds', async () => {
    const { storage, clock, counters, apiKeys, admission: server } = await setup();
    // The CLI: its own services on the same database and counters (Redis, in production).
    const cli = instance(storage, clock, counters).keys;
    const { record, key } = await apiKeys.create({
      plan: 'enterprise',
      customLimits: { perMinute: 1, perDay: 100 },
    });
    for (let i = 0; i < 5; i++) await server.admit(request(bearer(key)));
    expect(await server.admit(request(bearer(key)))).toMatchObject({
      refusal: { code: 'api_key_banned' },
    });

    // Within the key cache lifetime: the server's cached key predates the unban, so only the
    // live ban ended in the shared counters lets it through. Same minute: back to rate_limited.
    clock.advance(1_000);
    expect(await cli.unban(record.id, ACTOR)).toMatchObject({ id: record.id });
    expect(await server.admit(request(bearer(key)))).toMatchObject({
      refusal: { code: 'rate_limited', budget: 'key' },
    });
    const stored = await storage.apiKeys.findById(record.id);
    expect(stored?.bannedUntil).toBeUndefined();
    expect(stored?.banLiftedAt).toBe(clock.now());
  });

  it('answers false for a key that does not exist', async () => {
    const { keys } = await setup();
    await expect(keys.unban('key_nonexistent', ACTOR)).rejects.toMatchObject({
      code: 'key_not_found',
    });
  });
});
