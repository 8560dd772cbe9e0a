import { afterEach, describe, expect, it } from 'vitest';
import {
  type AdmissionRequest,
  AdmissionService,
} from '../../src/domain/admission/admission-service.js';
import { ApiKeyService } from '../../src/domain/api-keys/api-key-service.js';
import { KeyManagementService } from '../../src/domain/api-keys/key-management-service.js';
import { KeyUsageCounter } from '../../src/domain/api-keys/key-usage-counter.js';
import type { Storage } from '../../src/domain/ports.js';
import { RateLimiter } from '../../src/domain/rate-limits/rate-limiter.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { MemoryRateLimitStore } from '../../src/storage/memory/memory-rate-limit-store.js';
import { TestClock } from '../helpers/test-clock.js';

// Ten seconds into a minute.
const T0 = Date.parse('2026-11-23T12:00:10Z');
const OPS = { kind: 'cli', user: 'ops', host: 'desk' } as const;
const ADDRESS = '203.0.113.9';

const opened: Storage[] = [];
afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close();
});

async function setup() {
  const storage = await createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true });
  opened.push(storage);
  const clock = new TestClock(T0);
  const apiKeys = new ApiKeyService(storage.apiKeys, clock, 'production');
  const limiter = new RateLimiter(new MemoryRateLimitStore(clock), clock, {
    after: 2,
    durationMs: 60_000,
  });
  const usage = new KeyUsageCounter(storage.keyUsage, clock);
  const admission = new AdmissionService(apiKeys, limiter, usage);
  const keys = new KeyManagementService(storage, apiKeys, limiter, clock, {
    usageRetentionDays: 90,
  });
  const send = (token: string) => admission.admit(request(token));
  return { storage, clock, keys, admission, usage, send };
}

const request = (token: string): AdmissionRequest => ({
  credential: { kind: 'bearer', token },
  address: ADDRESS,
  operation: { access: 'api_key' },
});

describe('KeyManagementService', () => {
  it('moves a free key that used 50 of 60 this minute to pro with 250 left, not 300', async () => {
    const { keys, send } = await setup();
    const { key, secret } = await keys.create({ change: { plan: 'free' } }, OPS);
    for (let i = 0; i < 50; i++) expect((await send(secret)).admitted).toBe(true);

    const view = await keys.setPlan(key.id, { plan: 'pro' }, OPS);

    expect(view.limits).toEqual({ perMinute: 300, perDay: 10_000 });
    const next = await send(secret);
    expect(next.admitted).toBe(true);
    // The 51st request counted: 300 - 51 left in the minute.
    expect(next.rate.windows.find((w) => w.name === 'minute')).toMatchObject({
      limit: 300,
      remaining: 249,
    });
  });

  it('refuses with 429 after a downgrade below what was used, until the window resets', async () => {
    const { keys, send, clock } = await setup();
    const { key, secret } = await keys.create(
      { change: { plan: 'enterprise', perMinute: 100, perDay: 1_000 } },
      OPS,
    );
    for (let i = 0; i < 70; i++) await send(secret);
    await keys.setPlan(key.id, { plan: 'free' }, OPS);
    expect(await send(secret)).toMatchObject({
      admitted: false,
      refusal: { code: 'rate_limited', budget: 'key' },
    });
    clock.advance(60_000);
    expect((await send(secret)).admitted).toBe(true);
  });

  it('keeps a banned key banned across a change of plan', async () => {
    const { keys, send } = await setup();
    const { key, secret } = await keys.create(
      { change: { plan: 'enterprise', perMinute: 2, perDay: 100 } },
      OPS,
    );
    for (let i = 0; i < 6; i++) await send(secret);
    expect(await send(secret)).toMatchObject({ refusal: { code: 'api_key_banned' } });
    const view = await keys.setPlan(key.id, { plan: 'business' }, OPS);
    expect(view.state).toBe('banned');
    expect(await send(secret)).toMatchObject({ refusal: { code: 'api_key_banned' } });
  });

  it('refuses invalid enterprise limits, per-minute above per-day included, at creation and change', async () => {
    const { keys } = await setup();
    const { key } = await keys.create({ change: { plan: 'free' } }, OPS);
    for (const [perMinute, perDay, field] of [
      [10, 9, 'perMinute'],
      [0, 9, 'perMinute'],
      [5, 1.5, 'perDay'],
    ] as const) {
      const change = { plan: 'enterprise' as const, perMinute, perDay };
      for (const attempt of [keys.create({ change }, OPS), keys.setPlan(key.id, change, OPS)]) {
        await expect(attempt).rejects.toMatchObject({
          code: 'invalid_body',
          message: expect.stringContaining(field) as string,
        });
      }
    }
    await expect(keys.setPlan('key_missing', { plan: 'pro' }, OPS)).rejects.toMatchObject({
      code: 'key_not_found',
    });
  });

  it('refuses a key as expired from its expiry on, against the clock, not the cache', async () => {
    const { keys, send, clock } = await setup();
    const { key, secret } = await keys.create(
      { change: { plan: 'free' }, expiresAt: T0 + 2_000 },
      OPS,
    );
    expect((await send(secret)).admitted).toBe(true);
    clock.advance(1_999);
    expect((await send(secret)).admitted).toBe(true);
    clock.advance(1);
    expect(await send(secret)).toMatchObject({
      admitted: false,
      refusal: { code: 'unauthorized', reason: 'expired' },
    });
    expect((await keys.get(key.id))?.state).toBe('expired');
    await keys.setExpiry(key.id, null, OPS);
    expect((await send(secret)).admitted).toBe(true);
    await keys.setExpiry(key.id, clock.now(), OPS);
    expect(await send(secret)).toMatchObject({ refusal: { reason: 'expired' } });
  });

  it('rolls to a new secret with the same record and counters; the old one stops at the grace end', async () => {
    const { keys, send, clock } = await setup();
    const { key, secret: old } = await keys.create({ change: { plan: 'free' } }, OPS);
    for (let i = 0; i < 10; i++) await send(old);

    const rolled = await keys.roll(key.id, { graceMs: 2_000 }, OPS);

    expect(rolled.secret).not.toBe(old);
    expect(rolled.key).toMatchObject({ id: key.id, plan: 'free', state: 'active' });
    expect(rolled.key.previousSecretExpiresAt).toBe(new Date(T0 + 2_000).toISOString());
    // Both secrets draw on the one key's windows: 11th and 12th requests.
    expect((await send(rolled.secret)).rate.inForce.remaining).toBe(49);
    expect((await send(old)).rate.inForce.remaining).toBe(48);
    clock.advance(2_000);
    expect(await send(old)).toMatchObject({ refusal: { reason: 'expired' } });
    expect((await send(rolled.secret)).admitted).toBe(true);
    // Grace 0: the old secret stops at once.
    const again = await keys.roll(key.id, { graceMs: 0 }, OPS);
    expect(await send(rolled.secret)).toMatchObject({ refusal: { reason: 'expired' } });
    expect((await send(again.secret)).admitted).toBe(true);
  });

  it('refuses a new secret for a revoked key: it would be refused like the old one', async () => {
    const { keys } = await setup();
    const { key } = await keys.create({ change: { plan: 'free' } }, OPS);
    await keys.revoke(key.id, OPS);
    await expect(keys.roll(key.id, { graceMs: 0 }, OPS)).rejects.toMatchObject({
      code: 'key_revoked',
    });
    expect((await keys.get(key.id))?.state).toBe('revoked');
  });

  it('counts usage per UTC day, admitted and refused, written at the flush', async () => {
    const { keys, send, usage, clock } = await setup();
    const { key, secret } = await keys.create(
      { change: { plan: 'enterprise', perMinute: 5, perDay: 100 } },
      OPS,
    );
    for (let i = 0; i < 7; i++) await send(secret); // 5 admitted, 2 refused (429)
    expect(await keys.usage(key.id, 1)).toEqual([{ day: '2026-11-23', admitted: 0, refused: 0 }]);
    await usage.flush();
    clock.advance(86_400_000);
    await send(secret);
    await usage.flush();
    expect(await keys.usage(key.id, 3)).toEqual([
      { day: '2026-11-22', admitted: 0, refused: 0 },
      { day: '2026-11-23', admitted: 5, refused: 2 },
      { day: '2026-11-24', admitted: 1, refused: 0 },
    ]);
    clock.advance(90 * 86_400_000);
    expect(await keys.purgeUsage()).toBe(2);
  });

  it('audits every change with its actor, old and new values, and never a secret or hash', async () => {
    const { keys, send, clock, storage } = await setup();
    const { key, secret } = await keys.create(
      { change: { plan: 'enterprise', perMinute: 1, perDay: 100 }, name: 'audited' },
      OPS,
    );
    const admin = { kind: 'admin_token', id: 'adm_1' } as const;
    await keys.setPlan(key.id, { plan: 'pro' }, admin);
    await keys.setPlan(key.id, { plan: 'enterprise', perMinute: 1, perDay: 100 }, OPS);
    await keys.setExpiry(key.id, T0 + 86_400_000, OPS);
    const rolled = await keys.roll(key.id, { graceMs: 0 }, OPS);
    for (let i = 0; i < 5; i++) await send(rolled.secret); // 1 admitted, then 429s, then a ban
    clock.advance(60_000);
    await keys.recordEndedBans();
    // The ban has ended: an unban changes nothing and is not audited.
    await keys.unban(key.id, OPS);
    await keys.revoke(key.id, admin);
    await keys.revoke(key.id, admin);

    const trail = await keys.audit({ keyId: key.id });
    expect(trail.map((e) => [e.action, e.actor.kind])).toEqual([
      ['create', 'cli'],
      ['set_plan', 'admin_token'],
      ['set_plan', 'cli'],
      ['set_expiry', 'cli'],
      ['roll', 'cli'],
      ['ban', 'system'],
      ['ban_end', 'system'],
      ['revoke', 'admin_token'],
    ]);
    expect(trail[1]?.changes).toEqual({
      plan: { from: 'enterprise', to: 'pro' },
      limits: { from: { perMinute: 1, perDay: 100 }, to: { perMinute: 300, perDay: 10_000 } },
    });
    expect(trail[0]?.actor).toEqual(OPS);
    const record = await storage.apiKeys.findById(key.id);
    const text = JSON.stringify(trail);
    for (const forbidden of [secret, rolled.secret, record?.hash, record?.previousHash]) {
      expect(forbidden).toBeDefined();
      expect(text).not.toContain(forbidden);
    }
    // The ban ended at its own end, the minute the clock moved to.
    const since = await keys.audit({ keyId: key.id, since: clock.now() });
    expect(since.map((e) => e.action)).toEqual(['ban_end', 'revoke']);
  });
});
