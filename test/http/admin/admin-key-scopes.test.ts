import { describe, expect, it } from 'vitest';
import type {
  AuditEntry,
  KeyView,
  NewKeyResult,
} from '../../../src/domain/api-keys/key-management-service.js';
import { call } from '../../helpers/test-server.js';
import { adminCall, useAdminServer } from './admin-server.js';

const server = useAdminServer();

describe('admin API: scopes', () => {
  it('creates a read-only key, shows its scopes, and the pet listener holds it to them', async () => {
    const { token } = await server().createToken('ops');
    const create = await adminCall(server(), 'POST', '/admin/v1/keys', {
      key: token,
      body: { plan: 'free', name: 'browser', scopes: 'pets:read' },
    });
    expect(create.status).toBe(201);
    const made = create.body as NewKeyResult;
    expect(made.key.scopes).toEqual(['pets:read']);
    const listed = await adminCall(server(), 'GET', '/admin/v1/keys', { key: token });
    expect((listed.body as KeyView[]).find((k) => k.id === made.key.id)?.scopes).toEqual([
      'pets:read',
    ]);

    const pets = server().pets;
    expect((await call(pets, 'GET', '/v1/pets', { key: made.secret })).status).toBe(200);
    const refused = await call(pets, 'POST', '/v1/pets', {
      key: made.secret,
      body: { name: 'No', categoryId: 1 },
    });
    expect(refused.status).toBe(403);
    expect((refused.body as { code: string }).code).toBe('insufficient_scope');
  });

  it('gives a key created without scopes both', async () => {
    const { token } = await server().createToken('ops');
    const create = await adminCall(server(), 'POST', '/admin/v1/keys', {
      key: token,
      body: { plan: 'free' },
    });
    expect((create.body as NewKeyResult).key.scopes).toEqual(['pets:read', 'pets:write']);
  });

  it('changes the scopes with PUT .../scopes, audited from and to', async () => {
    const { id: tokenId, token } = await server().createToken('ops');
    const made = (
      await adminCall(server(), 'POST', '/admin/v1/keys', {
        key: token,
        body: { plan: 'free', scopes: 'pets:read' },
      })
    ).body as NewKeyResult;
    const post = () =>
      call(server().pets, 'POST', '/v1/pets', {
        key: made.secret,
        body: { name: 'Later', categoryId: 1 },
      });
    // Not called before the change: the pet listener's services learn of a change to a key they
    // hold from the key change count (test/process/key-life.test.ts), not from this call.
    const changed = await adminCall(server(), 'PUT', `/admin/v1/keys/${made.key.id}/scopes`, {
      key: token,
      body: { scopes: 'pets:write,pets:read' },
    });
    expect(changed.status).toBe(200);
    expect((changed.body as KeyView).scopes).toEqual(['pets:read', 'pets:write']);
    expect((await post()).status).toBe(201);

    const audit = await adminCall(server(), 'GET', `/admin/v1/audit?keyId=${made.key.id}`, {
      key: token,
    });
    const entries = audit.body as AuditEntry[];
    expect(entries.at(-1)).toMatchObject({
      action: 'set_scopes',
      changes: { scopes: { from: ['pets:read'], to: ['pets:read', 'pets:write'] } },
      actor: { kind: 'admin_token', id: tokenId },
    });
  });

  it('refuses an unknown scope or none with 400 invalid_body, and an unknown key with 404', async () => {
    const { token } = await server().createToken('ops');
    const made = (
      await adminCall(server(), 'POST', '/admin/v1/keys', { key: token, body: { plan: 'free' } })
    ).body as NewKeyResult;
    for (const scopes of ['pets:delete', ',', 'pets:read,admin']) {
      const res = await adminCall(server(), 'PUT', `/admin/v1/keys/${made.key.id}/scopes`, {
        key: token,
        body: { scopes },
      });
      expect({ scopes, status: res.status }).toEqual({ scopes, status: 400 });
      expect((res.body as { code: string }).code).toBe('invalid_body');
    }
    const create = await adminCall(server(), 'POST', '/admin/v1/keys', {
      key: token,
      body: { plan: 'free', scopes: 'pets:everything' },
    });
    expect(create.status).toBe(400);
    const unknown = await adminCall(server(), 'PUT', '/admin/v1/keys/key_0123456789abcdef/scopes', {
      key: token,
      body: { scopes: 'pets:read' },
    });
    expect(unknown.status).toBe(404);
  });
});
