import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { withBusyKeys } from '../helpers/busy-keys.js';
import { call, useServer } from '../helpers/test-server.js';

const busy = new Set<string>();
// On a file: creates go through the SQLite commit worker, as in production.
const server = useServer({ sqliteFile: true, wrapStorage: withBusyKeys(busy) });

async function petCount(): Promise<number> {
  return (await server().storage.pets.list({ afterId: 0, limit: 1_000_000 })).length;
}

function create(key: string, idempotencyKey: string, body: unknown) {
  return call(server(), 'POST', '/v1/pets', {
    key,
    body,
    headers: { 'idempotency-key': idempotencyKey },
  });
}

describe('POST /v1/pets with Idempotency-Key', () => {
  it('replays the first response for the same key and body, creating one pet', async () => {
    const { key } = await server().createKey();
    const idem = randomUUID();
    const before = await petCount();
    const first = await create(key, idem, { name: 'Once', categoryId: 4, status: 'pending' });
    const again = await create(key, idem, { name: 'Once', categoryId: 4, status: 'pending' });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(await petCount()).toBe(before + 1);
  });

  it('treats key order and white space as the same body', async () => {
    const { key } = await server().createKey();
    const idem = randomUUID();
    const first = await create(key, idem, { name: 'Same', categoryId: 1 });
    const again = await call(server(), 'POST', '/v1/pets', {
      key,
      rawBody: '{ "categoryId" : 1 ,\n "name": "Same" }',
      headers: { 'content-type': 'application/json', 'idempotency-key': idem },
    });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
  });

  it('returns 422 idempotency_key_reused when the same key comes with another body', async () => {
    const { key } = await server().createKey();
    const idem = randomUUID();
    await create(key, idem, { name: 'First', categoryId: 1 });
    const before = await petCount();
    const other = await create(key, idem, { name: 'Second', categoryId: 1 });
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ code: 'idempotency_key_reused', status: 422 });
    expect(await petCount()).toBe(before);
  });

  it('returns 409 idempotency_key_in_use while the first request still runs', async () => {
    const { key } = await server().createKey();
    const idem = randomUUID();
    // Another instance's request with this key has started and not yet committed.
    busy.add(idem);
    const before = await petCount();
    const res = await create(key, idem, { name: 'Busy', categoryId: 1 });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'idempotency_key_in_use', status: 409 });
    expect(await petCount()).toBe(before);
  });

  it('scopes keys to the API key: another API key with the same Idempotency-Key creates its own pet', async () => {
    const a = await server().createKey();
    const b = await server().createKey();
    const idem = randomUUID();
    const first = await create(a.key, idem, { name: 'Scoped', categoryId: 1 });
    const second = await create(b.key, idem, { name: 'Scoped', categoryId: 1 });
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect((second.body as { id: number }).id).not.toBe((first.body as { id: number }).id);
  });

  it('forgets a key after 24 hours', async () => {
    const { key } = await server().createKey();
    const idem = randomUUID();
    const first = await create(key, idem, { name: 'Day', categoryId: 1 });
    server().clock.advance(24 * 60 * 60 * 1000 + 1);
    const later = await create(key, idem, { name: 'Day', categoryId: 1 });
    expect(later.status).toBe(201);
    expect((later.body as { id: number }).id).not.toBe((first.body as { id: number }).id);
  });

  it('does not store a request refused by validation, so the key stays usable', async () => {
    const { key } = await server().createKey();
    const idem = randomUUID();
    const bad = await create(key, idem, { name: '', categoryId: 1 });
    expect(bad.status).toBe(400);
    const good = await create(key, idem, { name: 'Fixed', categoryId: 1 });
    expect(good.status).toBe(201);
  });
});
