import { describe, expect, it } from 'vitest';
import { AdminIdempotency } from '../../../src/domain/admin-tokens/admin-idempotency.js';
import { ADMIN_TOKEN_PREFIX, generateToken } from '../../../src/domain/api-keys/key-format.js';
import { useAdminServer } from './admin-server.js';

const server = useAdminServer();
const SECRET = 'pa_live_' + 'S'.repeat(36);

function scope(key: string) {
  return { tokenId: 'adm_test', token: generateToken(ADMIN_TOKEN_PREFIX), key };
}

describe('idempotent admin creates and rolls (on the configured storage)', () => {
  it('runs once per Idempotency-Key and body, replaying the first response; the store holds no secret', async () => {
    // What reaches the database: every write the store is asked to make.
    const store = server().storage();
    const written: unknown[] = [];
    const idem = new AdminIdempotency(
      {
        claim: (record, expired) => (written.push(record), store.claim(record, expired)),
        complete: (claim, response) => (written.push(response), store.complete(claim, response)),
        release: (claim) => store.release(claim),
        purgeExpired: (before, limit) => store.purgeExpired(before, limit),
      },
      server().pets.clock,
    );
    const s = scope(`k-${Math.random()}`);
    let runs = 0;
    const op = async () => ({ status: 201, body: { secret: SECRET, n: ++runs } });
    const first = await idem.run(s, { plan: 'free', name: 'a' }, op);
    const again = await idem.run(s, { name: 'a', plan: 'free' }, op);
    expect(first).toEqual({ status: 201, body: { secret: SECRET, n: 1 }, replayed: false });
    expect(again).toEqual({ status: 201, body: { secret: SECRET, n: 1 }, replayed: true });
    expect(runs).toBe(1);
    const rows = JSON.stringify(written);
    expect(written.length).toBe(3);
    expect(rows).not.toContain(SECRET);
    expect(rows).not.toContain(s.key);
    // Another admin token cannot read it: the seal is bound to the token.
    await expect(
      idem.run({ ...s, token: generateToken(ADMIN_TOKEN_PREFIX) }, { plan: 'free', name: 'a' }, op),
    ).rejects.toThrow();
  });

  it('refuses the same key with another body: 422 idempotency_key_reused', async () => {
    const idem = new AdminIdempotency(server().storage(), server().pets.clock);
    const s = scope(`k-${Math.random()}`);
    await idem.run(s, { plan: 'free' }, async () => ({ status: 201, body: {} }));
    await expect(
      idem.run(s, { plan: 'pro' }, async () => ({ status: 201, body: {} })),
    ).rejects.toMatchObject({
      code: 'idempotency_key_reused',
    });
  });

  it('refuses the same key while the first is running: 409; a failed first frees the key', async () => {
    const idem = new AdminIdempotency(server().storage(), server().pets.clock);
    const s = scope(`k-${Math.random()}`);
    let release: () => void = () => undefined;
    const slow = idem.run(
      s,
      { plan: 'free' },
      () => new Promise((done) => (release = () => done({ status: 201, body: {} }))),
    );
    await new Promise((r) => setTimeout(r, 50));
    await expect(
      idem.run(s, { plan: 'free' }, async () => ({ status: 201, body: {} })),
    ).rejects.toMatchObject({
      code: 'idempotency_key_in_use',
    });
    release();
    await slow;
    const t = scope(`k-${Math.random()}`);
    await expect(idem.run(t, {}, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect((await idem.run(t, {}, async () => ({ status: 200, body: { ok: 1 } }))).replayed).toBe(
      false,
    );
  });

  it('forgets records after 24 hours', async () => {
    const idem = new AdminIdempotency(server().storage(), server().pets.clock);
    const s = scope(`k-${Math.random()}`);
    await idem.run(s, {}, async () => ({ status: 201, body: {} }));
    server().pets.clock.advance(AdminIdempotency.RETENTION_MS + 1);
    expect(await idem.purgeExpired(1000, 10)).toBeGreaterThanOrEqual(1);
    expect(
      (await idem.run(s, { other: 1 }, async () => ({ status: 201, body: {} }))).replayed,
    ).toBe(false);
  });

  it('never runs a create again when storing its answer failed: 409 idempotency_key_in_use for 24 hours', async () => {
    const store = server().storage();
    let failSeal = true;
    const idem = new AdminIdempotency(
      {
        claim: (record, expired) => store.claim(record, expired),
        complete: (claim, response) =>
          failSeal
            ? Promise.reject(new Error('database went away'))
            : store.complete(claim, response),
        release: (claim) => store.release(claim),
        purgeExpired: (before, limit) => store.purgeExpired(before, limit),
      },
      server().pets.clock,
    );
    const s = scope(`k-${Math.random()}`);
    let runs = 0;
    const op = async () => ({ status: 201, body: { secret: SECRET, n: ++runs } });
    // Done, so answered, though the answer could not be stored.
    await expect(idem.run(s, { plan: 'free' }, op)).resolves.toMatchObject({ status: 201 });
    failSeal = false;
    for (const after of [1_000, 2 * 60_000, 23 * 3_600_000]) {
      server().pets.clock.advance(after);
      await expect(idem.run(s, { plan: 'free' }, op)).rejects.toMatchObject({
        code: 'idempotency_key_in_use',
      });
    }
    expect(runs).toBe(1);
    // After the retention, the key is free again.
    server().pets.clock.advance(AdminIdempotency.RETENTION_MS);
    await expect(idem.run(s, { plan: 'free' }, op)).resolves.toMatchObject({ replayed: false });
    expect(runs).toBe(2);
  });

  it('seals an answer only into its own claim, not into a later one of the same key', async () => {
    const idem = new AdminIdempotency(server().storage(), server().pets.clock);
    const s = scope(`k-${Math.random()}`);
    let finishFirst: () => void = () => undefined;
    let started: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (started = resolve));
    const first = idem.run(
      s,
      { plan: 'free' },
      () =>
        new Promise((done) => {
          finishFirst = () => done({ status: 201, body: { from: 'first' } });
          started();
        }),
    );
    await running;
    // The first runs past the retention; a request with another body takes the expired key.
    server().pets.clock.advance(AdminIdempotency.RETENTION_MS + 1);
    await idem.run(s, { plan: 'pro' }, async () => ({ status: 201, body: { from: 'second' } }));
    finishFirst();
    await expect(first).resolves.toMatchObject({ body: { from: 'first' }, replayed: false });
    // The key's record still answers the second request, sealed by it.
    await expect(
      idem.run(s, { plan: 'pro' }, async () => ({ status: 201, body: { from: 'third' } })),
    ).resolves.toEqual({ status: 201, body: { from: 'second' }, replayed: true });
  });
});
