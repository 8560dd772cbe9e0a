import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectRateLimitHeaders, parseRateLimitHeader } from '../helpers/rate-limit-headers.js';
import { call, TEST_BACKEND, type TestServer, useServer } from '../helpers/test-server.js';

/**
 * Scopes (docs/keys.md): a key holds pets:read (listPets, getPet) and/or pets:write (createPet);
 * a valid key without the scope an operation needs gets 403 insufficient_scope, counted against
 * its limits, on the routes and on the fast path alike. Runs on either backend
 * (PETSTORE_TEST_BACKEND).
 */
const server = useServer();

// Keys cached before the first store generation read count as stale (fast-path.test.ts says why).
beforeAll(async () => {
  await server().services.cache.start();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Counts the requests the routes answer (they ask the cache through page() and pet()). */
function routeCalls(s: TestServer): () => number {
  const page = vi.spyOn(s.services.cache, 'page');
  const pet = vi.spyOn(s.services.cache, 'pet');
  return () => page.mock.calls.length + pet.mock.calls.length;
}

const LIMITS = { perMinute: 100, perDay: 1_000 };
/** What is left of the key's day: one less after every request the key sent, refused or not. */
const dayLeft = (headers: Headers) => parseRateLimitHeader(headers.get('ratelimit')).day?.r;

describe('a read-only key (pets:read)', () => {
  it('is refused on createPet with 403 insufficient_scope, its rate-limit headers, and counted', async () => {
    const { key, id } = await server().createKey('enterprise', LIMITS, ['pets:read']);
    const before = await call(server(), 'GET', '/v1/pets?limit=1', { key });
    expect(before.status).toBe(200);

    const refused = await call(server(), 'POST', '/v1/pets', {
      key,
      body: { name: 'Not mine to add', categoryId: 1 },
    });

    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      code: 'insufficient_scope',
      message: expect.stringContaining('pets:write') as unknown,
      status: 403,
    });
    expect(refused.headers.get('www-authenticate')).toBe(
      'Bearer realm="pets", error="insufficient_scope", scope="pets:write"',
    );
    expectRateLimitHeaders(refused.headers);
    expect(dayLeft(refused.headers)).toBe(LIMITS.perDay - 2);
    const after = await call(server(), 'GET', '/v1/pets?limit=1', { key });
    expect(dayLeft(after.headers)).toBe(LIMITS.perDay - 3);
    // Nothing was made, and the refusal is counted in the key's usage as refused.
    expect(
      ((await call(server(), 'GET', '/v1/pets?limit=100', { key })).body as unknown[]).some(
        (pet) => (pet as { name: string }).name === 'Not mine to add',
      ),
    ).toBe(false);
    await server().services.usage.flush();
    const [today] = await server().services.keys.usage(id, 1);
    expect(today).toMatchObject({ admitted: 3, refused: 1 });
  });

  it('is answered on listPets and getPet, by the routes and by the fast path', async () => {
    const writer = await server().createKey('business', undefined, ['pets:write']);
    const created = await call(server(), 'POST', '/v1/pets', {
      key: writer.key,
      body: { name: 'Readable', categoryId: 2, status: 'available' },
    });
    expect(created.status).toBe(201);
    const petId = (created.body as { id: number }).id;
    const { key } = await server().createKey('business', undefined, ['pets:read']);
    const byRoute = routeCalls(server());

    // Forms only the routes read (a leading zero): always the routes.
    const routeList = await call(server(), 'GET', '/v1/pets?limit=05', { key });
    const routeGet = await call(server(), 'GET', `/v1/pets/0${petId}`, { key });
    expect([routeList.status, routeGet.status]).toEqual([200, 200]);
    expect(byRoute()).toBe(2);

    // The pet is cached by the route's answer: the plain form is the fast path's.
    const first = await call(server(), 'GET', `/v1/pets/${petId}`, { key });
    const fast = await call(server(), 'GET', `/v1/pets/${petId}`, { key });
    expect([first.status, fast.status]).toEqual([200, 200]);
    expect(fast.text).toBe(first.text);
    expect(byRoute()).toBeLessThanOrEqual(3);
    const routesBefore = byRoute();
    const list = await call(server(), 'GET', '/v1/pets?limit=5', { key });
    expect(list.status).toBe(200);
    // Only SQLite reads a page at once on the fast path; PostgreSQL's goes to the route.
    if (TEST_BACKEND === 'sqlite') expect(byRoute()).toBe(routesBefore);
  });
});

describe('a write-only key (pets:write)', () => {
  it('is refused on listPets and getPet with scope="pets:read", on either path', async () => {
    const both = await server().createKey('business');
    const created = await call(server(), 'POST', '/v1/pets', {
      key: both.key,
      body: { name: 'Hidden', categoryId: 3 },
    });
    const petId = (created.body as { id: number }).id;
    // Cached, so the plain forms reach the fast path's admission.
    expect((await call(server(), 'GET', `/v1/pets/${petId}`, { key: both.key })).status).toBe(200);
    const { key } = await server().createKey('business', undefined, ['pets:write']);
    for (const path of [
      '/v1/pets',
      '/v1/pets?limit=05',
      `/v1/pets/${petId}`,
      `/v1/pets/0${petId}`,
    ]) {
      const res = await call(server(), 'GET', path, { key });
      expect({ path, status: res.status }).toEqual({ path, status: 403 });
      expect(res.headers.get('www-authenticate')).toBe(
        'Bearer realm="pets", error="insufficient_scope", scope="pets:read"',
      );
      expectRateLimitHeaders(res.headers);
    }
    expect(
      (await call(server(), 'POST', '/v1/pets', { key, body: { name: 'Ok', categoryId: 3 } }))
        .status,
    ).toBe(201);
  });

  it('needs no scope for a path no operation serves: 404 as for any key', async () => {
    const { key } = await server().createKey('free', undefined, ['pets:write']);
    const res = await call(server(), 'GET', '/v1/nothing-here', { key });
    expect(res.status).toBe(404);
  });
});

describe('set-scopes on a running server', () => {
  it('takes effect on the next request of a key this server has cached', async () => {
    const { key, id } = await server().createKey('business');
    const post = () =>
      call(server(), 'POST', '/v1/pets', { key, body: { name: 'Before', categoryId: 4 } });
    expect((await post()).status).toBe(201);
    await server().services.keys.setScopes(id, ['pets:read'], {
      kind: 'cli',
      user: 'test',
      host: 'test',
    });
    expect((await post()).status).toBe(403);
  });
});
