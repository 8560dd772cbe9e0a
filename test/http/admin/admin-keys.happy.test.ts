import { describe, expect, it } from 'vitest';
import type {
  AuditEntry,
  KeyView,
  NewKeyResult,
} from '../../../src/domain/api-keys/key-management-service.js';
import { newAuditId, SYSTEM_ACTOR } from '../../../src/domain/api-keys/key-audit.js';
import { call } from '../../helpers/test-server.js';
import { adminCall, useAdminServer } from './admin-server.js';

const server = useAdminServer();

async function setup() {
  const { id, token } = await server().createToken('ops');
  const create = await adminCall(server(), 'POST', '/admin/v1/keys', {
    key: token,
    body: { plan: 'free', name: 'acme' },
  });
  expect(create.status).toBe(201);
  const made = create.body as NewKeyResult;
  return { tokenId: id, token, made, create };
}

describe('admin API operations', () => {
  it('creates a key: 201, Location, the secret once, and the key works on the pet listener', async () => {
    const { made, create, token } = await setup();
    expect(create.headers.get('location')).toBe(`/admin/v1/keys/${made.key.id}`);
    expect(made.secret).toMatch(/^pa_live_[0-9A-Za-z]{36}$/);
    expect(made.key).toMatchObject({ name: 'acme', plan: 'free', state: 'active' });
    expect((await call(server().pets, 'GET', '/v1/pets', { key: made.secret })).status).toBe(200);
    const got = await adminCall(server(), 'GET', `/admin/v1/keys/${made.key.id}`, { key: token });
    expect(got.status).toBe(200);
    expect(got.text).not.toContain(made.secret);
  });

  it('lists keys in the KeyView shape, never a secret', async () => {
    const { made, token } = await setup();
    const res = await adminCall(server(), 'GET', '/admin/v1/keys', { key: token });
    expect(res.status).toBe(200);
    expect((res.body as KeyView[]).map((k) => k.id)).toContain(made.key.id);
    expect(res.text).not.toContain(made.secret);
  });

  it('sets the plan, the expiry, and takes the expiry away again', async () => {
    const { made, token } = await setup();
    const plan = await adminCall(server(), 'PUT', `/admin/v1/keys/${made.key.id}/plan`, {
      key: token,
      body: { plan: 'enterprise', perMinute: 500, perDay: 9000 },
    });
    expect(plan.status).toBe(200);
    expect(plan.body).toMatchObject({
      plan: 'enterprise',
      limits: { perMinute: 500, perDay: 9000 },
    });
    const at = new Date(server().pets.clock.now() + 86_400_000).toISOString();
    const expiry = await adminCall(server(), 'PUT', `/admin/v1/keys/${made.key.id}/expiry`, {
      key: token,
      body: { expiresAt: at },
    });
    expect(expiry.status).toBe(200);
    expect((expiry.body as KeyView).expiresAt).toBe(at);
    const never = await adminCall(server(), 'PUT', `/admin/v1/keys/${made.key.id}/expiry`, {
      key: token,
      body: { expiresAt: 'never' },
    });
    expect((never.body as KeyView).expiresAt).toBeNull();
  });

  it('rolls a key: same id, a new secret once; revokes and unbans', async () => {
    const { made, token } = await setup();
    const roll = await adminCall(server(), 'POST', `/admin/v1/keys/${made.key.id}/roll`, {
      key: token,
      body: { graceSeconds: 60 },
    });
    expect(roll.status).toBe(200);
    const rolled = roll.body as NewKeyResult;
    expect(rolled.key.id).toBe(made.key.id);
    expect(rolled.secret).not.toBe(made.secret);
    expect(rolled.key.previousSecretExpiresAt).not.toBeNull();
    const unban = await adminCall(server(), 'POST', `/admin/v1/keys/${made.key.id}/unban`, {
      key: token,
    });
    expect(unban.status).toBe(200);
    const revoke = await adminCall(server(), 'POST', `/admin/v1/keys/${made.key.id}/revoke`, {
      key: token,
    });
    expect(revoke.status).toBe(200);
    expect((revoke.body as KeyView).state).toBe('revoked');
  });

  it('shows usage per day and the audit trail with the admin token as actor, never a secret', async () => {
    const { made, token, tokenId } = await setup();
    const usage = await adminCall(server(), 'GET', `/admin/v1/keys/${made.key.id}/usage?days=7`, {
      key: token,
    });
    expect(usage.status).toBe(200);
    expect(Array.isArray(usage.body)).toBe(true);
    await adminCall(server(), 'PUT', `/admin/v1/keys/${made.key.id}/plan`, {
      key: token,
      body: { plan: 'pro' },
    });
    const audit = await adminCall(server(), 'GET', `/admin/v1/audit?keyId=${made.key.id}`, {
      key: token,
    });
    expect(audit.status).toBe(200);
    const entries = audit.body as AuditEntry[];
    expect(entries.map((e) => e.action)).toEqual(expect.arrayContaining(['create', 'set_plan']));
    for (const entry of entries) expect(entry.actor).toEqual({ kind: 'admin_token', id: tokenId });
    expect(audit.text).not.toContain(made.secret);
    expect(audit.text).not.toContain(token);
  });

  it('returns 404 key_not_found for an unknown key id, for every operation on a key', async () => {
    const { token } = await server().createToken();
    const id = 'key_0000000000000000';
    for (const [method, path, body] of [
      ['GET', `/admin/v1/keys/${id}`, undefined],
      ['PUT', `/admin/v1/keys/${id}/plan`, { plan: 'pro' }],
      ['PUT', `/admin/v1/keys/${id}/expiry`, { expiresAt: 'never' }],
      ['POST', `/admin/v1/keys/${id}/roll`, {}],
      ['POST', `/admin/v1/keys/${id}/revoke`, undefined],
      ['POST', `/admin/v1/keys/${id}/unban`, undefined],
      ['GET', `/admin/v1/keys/${id}/usage`, undefined],
    ] as const) {
      const res = await adminCall(server(), method, path, {
        key: token,
        ...(body ? { body } : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toMatchObject({ code: 'key_not_found', status: 404 });
    }
  });
});

describe('idempotent creates and rolls', () => {
  it('replays a create with the same Idempotency-Key and body: the same key and secret, no second key', async () => {
    const { token } = await server().createToken();
    const send = (body: unknown) =>
      adminCall(server(), 'POST', '/admin/v1/keys', {
        key: token,
        body,
        headers: { 'idempotency-key': 'create-1' },
      });
    const first = await send({ plan: 'pro', name: 'idem' });
    const again = await send({ name: 'idem', plan: 'pro' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    const list = (await adminCall(server(), 'GET', '/admin/v1/keys', { key: token }))
      .body as KeyView[];
    expect(list.filter((k) => k.name === 'idem')).toHaveLength(1);
    const other = await send({ plan: 'free', name: 'idem' });
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ code: 'idempotency_key_reused' });
  });

  it('replays a roll with the same Idempotency-Key: one new secret, not two', async () => {
    const { made, token } = await setup();
    const send = () =>
      adminCall(server(), 'POST', `/admin/v1/keys/${made.key.id}/roll`, {
        key: token,
        body: {},
        headers: { 'idempotency-key': 'roll-1' },
      });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((again.body as NewKeyResult).secret).toBe((first.body as NewKeyResult).secret);
    const audit = (
      await adminCall(server(), 'GET', `/admin/v1/audit?keyId=${made.key.id}`, { key: token })
    ).body as AuditEntry[];
    expect(audit.filter((e) => e.action === 'roll')).toHaveLength(1);
  });

  it('pages the keys through Link rel="next", filtered by label, plan and state, sorted as asked', async () => {
    const { token } = await setup();
    const tag = `page-${Math.random().toString(36).slice(2, 8)}`;
    const made: string[] = [];
    for (const [i, plan] of (['pro', 'free', 'pro', 'pro', 'business'] as const).entries()) {
      const res = await adminCall(server(), 'POST', '/admin/v1/keys', {
        key: token,
        body: { plan, name: `${tag}-${i}` },
      });
      made.push((res.body as NewKeyResult).key.id);
    }
    await adminCall(server(), 'POST', `/admin/v1/keys/${made[3]}/revoke`, { key: token });
    const seen: string[] = [];
    let next: string | undefined =
      `/admin/v1/keys?limit=1&plan=pro&state=active&sort=label&order=desc&label=${tag.toUpperCase()}`;
    while (next !== undefined) {
      const res = await adminCall(server(), 'GET', next, { key: token });
      expect(res.status).toBe(200);
      seen.push(...(res.body as KeyView[]).map((k) => k.name));
      next = /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '')?.[1];
    }
    expect(seen).toEqual([`${tag}-2`, `${tag}-0`]);
    const other = await adminCall(
      server(),
      'GET',
      `/admin/v1/keys?limit=1&plan=pro&label=${tag}&cursor=${encodeURIComponent('eyJ4IjoxfQ')}`,
      { key: token },
    );
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ code: 'invalid_parameter' });
  });

  it('reads the audit trail newest first with order=desc', async () => {
    const { made, token } = await setup();
    await adminCall(server(), 'PUT', `/admin/v1/keys/${made.key.id}/plan`, {
      key: token,
      body: { plan: 'pro' },
    });
    const res = await adminCall(
      server(),
      'GET',
      `/admin/v1/audit?keyId=${made.key.id}&order=desc`,
      { key: token },
    );
    expect((res.body as AuditEntry[]).map((e) => e.action)).toEqual(['set_plan', 'create']);
  });

  it('makes set-plan, set-scopes, set-expiry, revoke and unban once per Idempotency-Key', async () => {
    const { made, token } = await setup();
    const id = made.key.id;
    for (const [method, path, body] of [
      ['PUT', `/admin/v1/keys/${id}/plan`, { plan: 'business' }],
      ['PUT', `/admin/v1/keys/${id}/scopes`, { scopes: 'pets:read' }],
      ['PUT', `/admin/v1/keys/${id}/expiry`, { expiresAt: '2099-01-01T00:00:00Z' }],
      ['POST', `/admin/v1/keys/${id}/unban`, undefined],
      ['POST', `/admin/v1/keys/${id}/revoke`, undefined],
    ] as const) {
      const send = () =>
        adminCall(server(), method, path, {
          key: token,
          ...(body === undefined ? {} : { body }),
          headers: { 'idempotency-key': `once-${path}` },
        });
      const first = await send();
      const again = await send();
      expect(first.status, path).toBe(200);
      expect(again.headers.get('idempotent-replayed'), path).toBe('true');
      expect(again.body, path).toEqual(first.body);
    }
    const audit = (await adminCall(server(), 'GET', `/admin/v1/audit?keyId=${id}`, { key: token }))
      .body as AuditEntry[];
    // The key was never banned: its unban changed nothing, so the trail has no entry for it.
    expect(audit.map((e) => e.action)).toEqual([
      'create',
      'set_plan',
      'set_scopes',
      'set_expiry',
      'revoke',
    ]);
  });
});

describe('concurrent changes of one key', () => {
  /** Holds the first `count` reads of the key until all of them were made: every change reads the same state. */
  function readsMeetFirst(keyId: string, count: number): () => void {
    const store = server().services.storage.apiKeys;
    const original = store.findById.bind(store);
    const arrived: Array<() => void> = [];
    store.findById = async (id) => {
      const record = await original(id);
      if (id !== keyId || arrived.length >= count) return record;
      await new Promise<void>((resolve) => {
        arrived.push(resolve);
        if (arrived.length === count) for (const go of arrived) go();
      });
      return record;
    };
    return () => {
      store.findById = original;
    };
  }

  it('two rolls at once: each answered 200 or 409 key_changed, and every secret handed out works', async () => {
    const { made, token } = await setup();
    const restore = readsMeetFirst(made.key.id, 2);
    let rolls;
    try {
      rolls = await Promise.all(
        [1, 2].map(() =>
          adminCall(server(), 'POST', `/admin/v1/keys/${made.key.id}/roll`, {
            key: token,
            body: { graceSeconds: 3600 },
          }),
        ),
      );
    } finally {
      restore();
    }
    for (const roll of rolls) {
      expect([200, 409]).toContain(roll.status);
      if (roll.status === 409) expect(roll.body).toMatchObject({ code: 'key_changed' });
    }
    const secrets = rolls
      .filter((r) => r.status === 200)
      .map((r) => (r.body as NewKeyResult).secret);
    expect(secrets.length).toBeGreaterThan(0);
    // The secret of the roll that landed first is the previous one of the second, in its grace.
    for (const secret of secrets) {
      expect((await call(server().pets, 'GET', '/v1/pets', { key: secret })).status).toBe(200);
    }
    // The audit chains them: the second roll's "from" is the first one's "to".
    const audit = await adminCall(server(), 'GET', `/admin/v1/audit?keyId=${made.key.id}`, {
      key: token,
    });
    const prefixes = (audit.body as AuditEntry[])
      .filter((e) => e.action === 'roll')
      .map((e) => e.changes.prefix as { from: string; to: string });
    expect(prefixes).toHaveLength(secrets.length);
    if (prefixes.length === 2) expect(prefixes[1]?.from).toBe(prefixes[0]?.to);
  });

  it('answers 409 key_changed, changes nothing and audits nothing when other changes land every time', async () => {
    const { made, token } = await setup();
    const store = server().services.storage.apiKeys;
    const original = store.findById.bind(store);
    let racing = 0;
    // Another writer changes the key's expiry right after each read of the roll.
    store.findById = async (id) => {
      const record = await original(id);
      if (id === made.key.id && racing < 10) {
        racing += 1;
        const at = Date.UTC(2040, 0, racing);
        await store.update(
          id,
          { expiresAt: at },
          {
            id: newAuditId(),
            keyId: id,
            at: Date.now(),
            action: 'set_expiry',
            changes: { expiresAt: { from: null, to: new Date(at).toISOString() } },
            actor: SYSTEM_ACTOR,
          },
        );
      }
      return record;
    };
    let roll;
    try {
      roll = await adminCall(server(), 'POST', `/admin/v1/keys/${made.key.id}/roll`, {
        key: token,
        body: {},
      });
    } finally {
      store.findById = original;
    }
    expect(roll.status).toBe(409);
    expect(roll.body).toMatchObject({ code: 'key_changed', status: 409 });
    expect((await call(server().pets, 'GET', '/v1/pets', { key: made.secret })).status).toBe(200);
    const audit = await adminCall(server(), 'GET', `/admin/v1/audit?keyId=${made.key.id}`, {
      key: token,
    });
    expect((audit.body as AuditEntry[]).map((e) => e.action)).not.toContain('roll');
  });
});
