import { afterEach, describe, expect, it } from 'vitest';
import type { NewPet } from '../../src/domain/pets/pet.js';
import { call, startServer, type TestServer } from '../helpers/test-server.js';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serverWithPets(count: number, make: (i: number) => NewPet = samplePet) {
  const server = await startServer();
  servers.push(server);
  await server.storage.pets.insertMany(Array.from({ length: count }, (_, i) => make(i)));
  const { key } = await server.createKey();
  return { server, key };
}

function samplePet(i: number): NewPet {
  const status = (['available', 'pending', 'sold'] as const)[i % 3];
  return { name: `Pet ${i}`, categoryId: BigInt(1 + (i % 4)), ...(i % 5 === 4 ? {} : { status }) };
}

function nextLink(headers: Headers): string | undefined {
  const link = headers.get('link');
  return link ? /<([^>]+)>; rel="next"/.exec(link)?.[1] : undefined;
}

describe('GET /v1/pets (listPets), when it succeeds', () => {
  it('returns 20 pets ordered by id when limit is omitted', async () => {
    const { server, key } = await serverWithPets(25);
    const res = await call(server, 'GET', '/v1/pets', { key });
    expect(res.status).toBe(200);
    const pets = res.body as { id: number }[];
    expect(pets).toHaveLength(20);
    expect(pets.map((p) => p.id)).toEqual([...pets.map((p) => p.id)].sort((a, b) => a - b));
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('returns exactly limit pets and a Link to the next page when more exist', async () => {
    const { server, key } = await serverWithPets(7);
    const res = await call(server, 'GET', '/v1/pets?limit=3', { key });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(3);
    const next = nextLink(res.headers);
    expect(next).toMatch(new RegExp(`^${server.config.publicBaseUrl}/v1/pets\\?limit=3&cursor=`));
  });

  it('sends no Link when the page holds the last pets, also when they fill it exactly', async () => {
    const { server, key } = await serverWithPets(6);
    const first = await call(server, 'GET', '/v1/pets?limit=3', { key });
    const next = nextLink(first.headers);
    expect(next).toBeDefined();
    const second = await call(server, 'GET', next!.replace(server.config.publicBaseUrl, ''), {
      key,
    });
    expect(second.status).toBe(200);
    expect(second.body).toHaveLength(3);
    expect(second.headers.get('link')).toBeNull();
  });

  it('returns an empty array when there are no pets', async () => {
    const { server, key } = await serverWithPets(0);
    const res = await call(server, 'GET', '/v1/pets', { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });

  it('returns only pets with the status asked for, and the next link keeps the filter', async () => {
    const { server, key } = await serverWithPets(30);
    const res = await call(server, 'GET', '/v1/pets?status=sold&limit=4', { key });
    expect(res.status).toBe(200);
    const pets = res.body as { status?: string }[];
    expect(pets).toHaveLength(4);
    expect(pets.every((p) => p.status === 'sold')).toBe(true);
    expect(nextLink(res.headers)).toContain('status=sold');
  });

  it('walks every pet exactly once across pages while pets are being added', async () => {
    const { server, key } = await serverWithPets(95);
    const seen: number[] = [];
    let path: string | undefined = '/v1/pets?limit=10';
    let added = 0;
    while (path) {
      const res = await call(server, 'GET', path, { key });
      expect(res.status).toBe(200);
      seen.push(...(res.body as { id: number }[]).map((p) => p.id));
      // Pets added mid-walk must not shift or repeat the ones already served.
      await call(server, 'POST', '/v1/pets', {
        key,
        body: { name: `late ${added++}`, categoryId: 9 },
      });
      path = nextLink(res.headers)?.replace(server.config.publicBaseUrl, '');
    }
    expect(new Set(seen).size).toBe(seen.length);
    const original = (await server.storage.pets.list({ afterId: 0, limit: 95 })).map((p) => p.id);
    for (const id of original) expect(seen).toContain(id);
  });

  it('writes each pet with exactly id, name, categoryId and status only when set', async () => {
    const { server, key } = await serverWithPets(5);
    const res = await call(server, 'GET', '/v1/pets?limit=5', { key });
    const pets = res.body as Record<string, unknown>[];
    for (const pet of pets) {
      const keys = Object.keys(pet).sort();
      expect(keys).toEqual(
        'status' in pet ? ['categoryId', 'id', 'name', 'status'] : ['categoryId', 'id', 'name'],
      );
    }
    expect(pets.some((p) => !('status' in p))).toBe(true);
  });

  it('writes a categoryId above 2^53 exactly', async () => {
    const { server, key } = await serverWithPets(1, () => ({
      name: 'Big',
      categoryId: 9223372036854775807n,
    }));
    const res = await call(server, 'GET', '/v1/pets', { key });
    expect(res.text).toContain('"categoryId":9223372036854775807');
  });
});
