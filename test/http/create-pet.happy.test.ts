import { describe, expect, it } from 'vitest';
import { call, useServer } from '../helpers/test-server.js';

// On a file: creates go through the SQLite commit worker, as in production.
const server = useServer({ sqliteFile: true });

describe('POST /v1/pets (createPet), when it succeeds', () => {
  it('returns 201, a Location and the pet with its new id', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'POST', '/v1/pets', {
      key,
      body: { name: 'Rex', categoryId: 3, status: 'available' },
    });
    expect(res.status).toBe(201);
    const pet = res.body as { id: number };
    expect(res.body).toEqual({ id: pet.id, name: 'Rex', categoryId: 3, status: 'available' });
    expect(Number.isSafeInteger(pet.id) && pet.id > 0).toBe(true);
    expect(res.headers.get('location')).toBe(`/v1/pets/${pet.id}`);
  });

  it('stores the pet: it can be read back by id and in the list', async () => {
    const { key } = await server().createKey();
    const created = await call(server(), 'POST', '/v1/pets', {
      key,
      body: { name: 'Mia', categoryId: 2 },
    });
    const { id } = created.body as { id: number };
    const read = await call(server(), 'GET', `/v1/pets/${id}`, { key });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    expect(await server().storage.pets.get(BigInt(id))).toEqual({
      id,
      name: 'Mia',
      categoryId: 2n,
    });
  });

  it('leaves status absent when it was omitted: no default is invented', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'POST', '/v1/pets', {
      key,
      body: { name: 'NoStatus', categoryId: 1 },
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body as object).sort()).toEqual(['categoryId', 'id', 'name']);
  });

  it('keeps a categoryId of 9223372036854775807 byte for byte', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'POST', '/v1/pets', {
      key,
      rawBody: '{"name":"Max","categoryId":9223372036854775807}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(201);
    expect(res.text).toContain('"categoryId":9223372036854775807');
    const { id } = JSON.parse(res.text) as { id: number };
    const read = await call(server(), 'GET', `/v1/pets/${id}`, { key });
    expect(read.text).toContain('"categoryId":9223372036854775807');
  });

  it('keeps a categoryId of 2^53 + 1 exactly', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'POST', '/v1/pets', {
      key,
      rawBody: '{"name":"Odd","categoryId":9007199254740993}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(201);
    expect(res.text).toContain('"categoryId":9007199254740993');
  });

  it('stores names exactly as sent: accents, emoji, inner spaces and 100 code points', async () => {
    const { key } = await server().createKey();
    for (const name of ['Zoë  the 🐕', ' padded ', '🐈'.repeat(100), 'Ω']) {
      const res = await call(server(), 'POST', '/v1/pets', { key, body: { name, categoryId: 1 } });
      expect(res.status).toBe(201);
      expect((res.body as { name: string }).name).toBe(name);
    }
  });

  it('accepts application/json with a charset parameter', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'POST', '/v1/pets', {
      key,
      body: { name: 'Charset', categoryId: 1 },
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(201);
  });

  it.each([
    ['1.0', '1'],
    ['1e2', '100'],
    ['2.50e1', '25'],
    ['100e-2', '1'],
    ['9007199254740993.000', '9007199254740993'],
    ['9223372036854775807.0', '9223372036854775807'],
    ['922337203685477580.7e1', '9223372036854775807'],
  ])('takes categoryId %s as the integer it is exactly: %s', async (written, integer) => {
    const { key } = await server().createKey();
    const res = await call(server(), 'POST', '/v1/pets', {
      key,
      rawBody: `{"name":"Exact","categoryId":${written}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(201);
    expect(res.text).toContain(`"categoryId":${integer}}`);
    const { id } = JSON.parse(res.text) as { id: number };
    expect((await server().storage.pets.get(BigInt(id)))?.categoryId).toBe(BigInt(integer));
  });

  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=UTF-8',
    'application/json;charset="utf-8"',
    'Application/JSON; Charset=Utf-8',
    'application/json ; charset=utf-8 ; version=1',
    'application/json;',
  ])('accepts Content-Type %s', async (type) => {
    const { key } = await server().createKey();
    const res = await call(server(), 'POST', '/v1/pets', {
      key,
      rawBody: '{"name":"Zoë 🐕","categoryId":1}',
      headers: { 'content-type': type },
    });
    expect(res.status).toBe(201);
    expect((res.body as { name: string }).name).toBe('Zoë 🐕');
  });

  it('assigns increasing ids', async () => {
    const { key } = await server().createKey();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await call(server(), 'POST', '/v1/pets', {
        key,
        body: { name: `n${i}`, categoryId: 1 },
      });
      ids.push((res.body as { id: number }).id);
    }
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(5);
  });
});
