import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DependencyUnavailableError } from '../../src/domain/errors.js';
import { encodeCursor } from '../../src/domain/pets/cursor.js';
import type { SqlitePetStore } from '../../src/storage/sqlite/sqlite-pet-store.js';
import { sample, scrapeAt } from '../helpers/prometheus-text.js';
import { call, TEST_BACKEND, type TestServer, useServer } from '../helpers/test-server.js';

/**
 * listPets and getPet answered by the fast path in front of Fastify (src/http/fast-path/): the same
 * answer, access line and counts as the routes give, and everything else left to them.
 */
const lines: string[] = [];
// At info, as servers run: at debug every request also logs its arrival, which only the routes do.
const server = useServer({ logLines: lines, logLevel: 'info', env: { PETSTORE_BAN_AFTER: '2' } });

// A server starts reading the store generation when it starts (startBackgroundWork): keys cached
// before the first read count as stale, so the first answers here would all go to the routes.
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

async function createPets(key: string, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await call(server(), 'POST', '/v1/pets', {
      key,
      body: { name: `Fast ${i}`, categoryId: 7, status: 'sold' },
    });
    expect(res.status).toBe(201);
    ids.push((res.body as { id: number }).id);
  }
  return ids;
}

/** Headers that differ between any two answers: the request id, the date, the counts left. */
const VOLATILE = new Set(['x-request-id', 'date', 'x-ratelimit-remaining', 'ratelimit']);
const steady = (headers: Headers) => [...headers].filter(([name]) => !VOLATILE.has(name));

const accessLine = (requestId: string) => {
  const found = lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.requestId === requestId && line.msg === 'request completed');
  expect(found).toHaveLength(1);
  const rest = { ...found[0] };
  expect(rest.durationMs).toEqual(expect.any(Number));
  for (const volatile of ['time', 'durationMs', 'requestId']) delete rest[volatile];
  return rest;
};

const LIST_ANSWERED = { operation: 'listPets', method: 'GET', status: '200' };

/** How much a series of the metrics grew between two scrapes. */
const grew = (before: string, after: string, name: string, labels: Record<string, string>) =>
  sample(after, name, labels) - sample(before, name, labels);

// PostgreSQL caches a page only once its ids are below the id horizon, a minute after they were taken.
const pagesCachedAtOnce = TEST_BACKEND === 'sqlite';
// Only SQLite reads synchronously: on PostgreSQL a page not cached goes to the route.
const readsNow = TEST_BACKEND === 'sqlite';

/** The cursor of a page of the sold pets that starts after `id`. */
const cursorAfter = (id: number) => encodeCursor(id, 'sold');

describe('the fast path', () => {
  it.runIf(pagesCachedAtOnce)(
    'answers a cached page as the route does: body, headers, access line, counts',
    async () => {
      const { key, id } = await server().createKey('business');
      await createPets(key, 3);
      const byRoute = routeCalls(server());
      const path = '/v1/pets?limit=2&status=sold';
      const get = (requestId: string) =>
        call(server(), 'GET', path, { key, headers: { 'x-request-id': requestId } });
      const before = await scrapeAt(server().url);
      // The first by the route (the fast path would read the page itself on SQLite), which caches it.
      const readsNow = vi.spyOn(server().services.pets, 'listsNow', 'get').mockReturnValue(false);
      const first = await get('cached-page-1');
      readsNow.mockRestore();
      expect(byRoute()).toBe(1);
      const second = await get('cached-page-2');
      expect(byRoute()).toBe(1);

      expect(second.status).toBe(200);
      expect(second.text).toBe(first.text);
      expect(steady(second.headers)).toEqual(steady(first.headers));
      expect(second.headers.get('x-request-id')).toBe('cached-page-2');
      expect(Number(second.headers.get('x-ratelimit-remaining'))).toBe(
        Number(first.headers.get('x-ratelimit-remaining')) - 1,
      );
      expect(accessLine('cached-page-2')).toEqual(accessLine('cached-page-1'));
      expect(accessLine('cached-page-2')).toMatchObject({ route: '/v1/pets', keyId: id });

      const after = await scrapeAt(server().url);
      expect(grew(before, after, 'petstore_http_requests_total', LIST_ANSWERED)).toBe(2);
      const timed = { operation: 'listPets' };
      expect(grew(before, after, 'petstore_http_request_duration_seconds_count', timed)).toBe(2);
    },
  );

  it.runIf(readsNow)(
    'reads a page that is not cached (the last one), as the route answers it',
    async () => {
      const { key, id } = await server().createKey('business');
      const ids = await createPets(key, 3);
      const byRoute = routeCalls(server());
      const byPath = vi.spyOn(server().services.cache, 'pageSync');
      // A limit of its own: no earlier test asked for this page, and it is not full.
      const path = `/v1/pets?limit=97&status=sold&cursor=${cursorAfter(ids[0]!)}`;
      const get = (requestId: string) =>
        call(server(), 'GET', path, { key, headers: { 'x-request-id': requestId } });
      const before = await scrapeAt(server().url);
      const first = await get('read-page-1');
      const second = await get('read-page-2');
      expect(byPath).toHaveBeenCalledTimes(2);
      expect(byRoute()).toBe(0);
      expect(second.status).toBe(200);
      expect((second.body as Array<{ id: number }>).map((pet) => pet.id)).toEqual(ids.slice(1));
      expect(second.headers.get('link')).toBeNull();
      expect(second.text).toBe(first.text);
      expect(steady(second.headers)).toEqual(steady(first.headers));
      expect(accessLine('read-page-2')).toMatchObject({ route: '/v1/pets', keyId: id });

      // The route's own answer to the same page, for comparison.
      vi.spyOn(server().services.pets, 'listsNow', 'get').mockReturnValue(false);
      const byFastify = await get('read-page-3');
      expect(byRoute()).toBe(1);
      expect(byFastify.text).toBe(second.text);
      expect(steady(byFastify.headers)).toEqual(steady(second.headers));
      expect(accessLine('read-page-3')).toEqual(accessLine('read-page-2'));
      const after = await scrapeAt(server().url);
      expect(grew(before, after, 'petstore_http_requests_total', LIST_ANSWERED)).toBe(3);
    },
  );

  it.runIf(readsNow)(
    'caches a full page it read, and leaves a bad cursor to the route',
    async () => {
      const { key } = await server().createKey('business');
      const ids = await createPets(key, 3);
      await call(server(), 'GET', '/v1/pets?limit=1', { key });
      const read = vi.spyOn(server().services.pets, 'listNow');
      const path = `/v1/pets?limit=1&status=sold&cursor=${cursorAfter(ids[0]!)}`;
      const first = await call(server(), 'GET', path, { key });
      const second = await call(server(), 'GET', path, { key });
      expect(read).toHaveBeenCalledTimes(1); // the second from the answer the first cached
      expect(second.text).toBe(first.text);
      expect(second.headers.get('link')).toBe(first.headers.get('link'));
      expect(first.headers.get('link')).toContain('rel="next"');

      const byRoute = routeCalls(server());
      const other = await call(server(), 'GET', `/v1/pets?limit=1&cursor=${cursorAfter(ids[0]!)}`, {
        key,
      });
      expect(other.status).toBe(400); // a cursor of the sold pets, asked of all pets
      expect((other.body as { message: string }).message).toMatch(/cursor belongs to status=sold/);
      expect(byRoute()).toBe(1);
    },
  );

  it.runIf(readsNow)(
    'leaves a store error of a page it read to the route, counted once',
    async () => {
      const { key } = await server().createKey('business');
      await call(server(), 'GET', '/v1/pets?limit=1', { key });
      const store = server().storage.pets as SqlitePetStore;
      const outage = vi.spyOn(store, 'listNow').mockImplementation(() => {
        throw new DependencyUnavailableError('database', { cause: new Error('test outage') });
      });
      const path = '/v1/pets?limit=96&status=sold';
      const ok = await call(server(), 'GET', '/v1/pets?limit=1', { key }); // cached: no read
      const failed = await call(server(), 'GET', path, { key });
      expect(failed.status).toBe(503);
      expect(failed.headers.get('retry-after')).not.toBeNull();
      // The fast path read first, then the route (its list reads through listNow too).
      expect(outage).toHaveBeenCalledTimes(2);
      outage.mockRestore();
      const after = await call(server(), 'GET', path, { key });
      expect(after.status).toBe(200);
      const left = (res: typeof ok) => Number(res.headers.get('x-ratelimit-remaining'));
      expect([left(failed), left(after)]).toEqual([left(ok) - 1, left(ok) - 2]);
    },
  );

  it.runIf(readsNow)(
    'gives each answer its own headers when answers alternate: two pages, a pet, a 304, as the routes do',
    async () => {
      const { key } = await server().createKey('business');
      const ids = await createPets(key, 4);
      // Two pages of one pet each, both with a next page (their own Link and ETag), and a pet.
      const pageA = `/v1/pets?limit=1&status=sold&cursor=${cursorAfter(ids[0]!)}`;
      const pageB = `/v1/pets?limit=1&status=sold&cursor=${cursorAfter(ids[1]!)}`;
      const pet = `/v1/pets/${ids[3]!}`;
      const get = (path: string, headers: Record<string, string> = {}) =>
        call(server(), 'GET', path, { key, headers });
      const byRoute = routeCalls(server());
      // The routes' answers first (which cache what they read).
      const readsNow = vi.spyOn(server().services.pets, 'listsNow', 'get').mockReturnValue(false);
      const route = { a: await get(pageA), b: await get(pageB), pet: await get(pet) };
      readsNow.mockRestore();
      expect(byRoute()).toBe(3);
      expect(route.a.headers.get('link')).not.toBe(route.b.headers.get('link'));
      expect(route.a.headers.get('etag')).not.toBe(route.b.headers.get('etag'));

      // Then the fast path's, alternating, each as the route gave it.
      for (const [path, expected] of [
        [pageA, route.a],
        [pageB, route.b],
        [pet, route.pet],
        [pageB, route.b],
        [pageA, route.a],
      ] as const) {
        const fast = await get(path);
        expect(fast.status).toBe(200);
        expect(fast.text).toBe(expected.text);
        expect(steady(fast.headers)).toEqual(steady(expected.headers));
      }
      const etagA = route.a.headers.get('etag') ?? '';
      const notModified = await get(pageA, { 'if-none-match': etagA });
      expect(notModified.status).toBe(304);
      expect(notModified.headers.get('etag')).toBe(etagA);
      expect(notModified.headers.get('link')).toBe(route.a.headers.get('link'));
      expect(notModified.headers.get('content-type')).toBeNull();
      const again = await get(pageB);
      expect(steady(again.headers)).toEqual(steady(route.b.headers));
      expect(byRoute()).toBe(3);
    },
  );

  it('answers a cached pet as the route does, deprecation headers and deprecated calls included', async () => {
    const { key, id } = await server().createKey('pro');
    const [petId] = await createPets(key, 1);
    const byRoute = routeCalls(server());
    const get = (requestId: string) =>
      call(server(), 'GET', `/v1/pets/${petId}`, { key, headers: { 'x-request-id': requestId } });
    const before = await scrapeAt(server().url);
    const first = await get('cached-pet-1');
    const second = await get('cached-pet-2');
    expect(byRoute()).toBe(1);
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(steady(second.headers)).toEqual(steady(first.headers));
    expect(second.headers.get('deprecation')).toMatch(/^@\d+$/);
    expect(accessLine('cached-pet-2')).toEqual(accessLine('cached-pet-1'));

    const after = await scrapeAt(server().url);
    const deprecated = { operation: 'getPet', plan: 'pro' };
    expect(grew(before, after, 'petstore_deprecated_operation_calls_total', deprecated)).toBe(2);
    await server().services.apiKeys.flushDeprecatedCalls();
    expect((await server().storage.apiKeys.findById(id))?.deprecatedCalls).toBe(2);
  });

  it('counts a deprecated call once when the counters fail on the fast path and the route answers', async () => {
    const { key, id } = await server().createKey('pro');
    const [petId] = await createPets(key, 1);
    const get = () => call(server(), 'GET', `/v1/pets/${petId}`, { key });
    expect((await get()).status).toBe(200); // the route caches the pet
    const limiter = server().services.limiter;
    const hitKey = vi.spyOn(limiter, 'hitKey').mockImplementationOnce(() => {
      throw new DependencyUnavailableError('redis', { cause: new Error('test outage') });
    });
    const byRoute = routeCalls(server());
    // The fast path's admission throws; the route asks again, and is answered.
    expect((await get()).status).toBe(200);
    expect(hitKey).toHaveBeenCalledTimes(2);
    expect(byRoute()).toBe(1);
    await server().services.apiKeys.flushDeprecatedCalls();
    expect((await server().storage.apiKeys.findById(id))?.deprecatedCalls).toBe(2);
  });

  it.runIf(pagesCachedAtOnce)(
    'counts a refusal it decided once: a ban comes after PETSTORE_BAN_AFTER more 429s',
    async () => {
      const { key } = await server().createKey('enterprise', { perMinute: 2, perDay: 1000 });
      const byRoute = routeCalls(server());
      const list = () => call(server(), 'GET', '/v1/pets?limit=1', { key });
      expect((await list()).status).toBe(200); // the route caches the page
      expect((await list()).status).toBe(200); // the fast path answers from the cache
      expect(byRoute()).toBe(1);
      // The first 429, then two more tolerated (PETSTORE_BAN_AFTER=2), then the ban.
      const codes = [];
      for (let i = 0; i < 4; i++) codes.push(((await list()).body as { code: string }).code);
      expect(codes).toEqual(['rate_limited', 'rate_limited', 'rate_limited', 'api_key_banned']);
    },
  );

  it('leaves to the routes what they answer otherwise', async () => {
    const { key } = await server().createKey('business');
    const [petId] = await createPets(key, 2);
    await call(server(), 'GET', '/v1/pets?limit=1', { key });
    await call(server(), 'GET', `/v1/pets/${petId}`, { key });
    const expectations: Array<[string, string, Record<string, string>, number, string?]> = [
      ['GET', '/v1/pets?limit=0', {}, 400, 'invalid_parameter'],
      ['GET', '/v1/pets?limit=1&limit=1', {}, 400, 'invalid_parameter'],
      ['GET', '/v1/pets?limit=1&api_key=x', {}, 400, 'invalid_parameter'],
      ['GET', '/v1/pets?status=adopted', {}, 400, 'invalid_parameter'],
      ['GET', '/v1/pets?cursor=%%%', {}, 400],
      ['GET', `/v1/pets/0${petId}`, {}, 200],
      ['GET', '/v1/pets/0', {}, 400, 'invalid_parameter'],
      ['GET', '/v1/pets/9223372036854775808', {}, 400, 'invalid_parameter'],
      ['GET', '/v1/pets?limit=1', { authorization: 'Basic abc' }, 401, 'unauthorized'],
      ['HEAD', '/v1/pets?limit=1', {}, 200],
      ['POST', '/v1/pets?limit=1', { 'content-type': 'text/plain' }, 415],
    ];
    for (const [method, path, headers, status, code] of expectations) {
      const res = await call(server(), method, path, {
        ...(headers.authorization ? {} : { key }),
        headers,
      });
      expect({ method, path, status: res.status }).toEqual({ method, path, status });
      if (code !== undefined) expect((res.body as { code: string }).code).toBe(code);
    }
  });
});
