import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GET_PET_SUNSET_AT } from '../../src/domain/pets/deprecation.js';
import type { Storage } from '../../src/domain/ports.js';
import { call, type TestServer, useServer } from '../helpers/test-server.js';
import { expectRateLimitHeaders } from '../helpers/rate-limit-headers.js';
import { overlayStorage } from '../helpers/storage-overlay.js';
import { withBusyKeys } from '../helpers/busy-keys.js';

let failLists = false;
/** Lets a test make listing pets fail, to see a 500 from inside an operation. */
function flakyStorage(storage: Storage): Storage {
  return overlayStorage(storage, {
    pets: {
      list: (query) =>
        failLists ? Promise.reject(new Error('disk on fire')) : storage.pets.list(query),
    },
  });
}

const busy = new Set<string>();
const server = useServer({ wrapStorage: (storage) => flakyStorage(withBusyKeys(busy)(storage)) });

type Case = [
  status: number,
  what: string,
  send: (s: TestServer, key: string) => ReturnType<typeof call>,
];

const cases: Case[] = [
  [200, 'listPets', (s, key) => call(s, 'GET', '/v1/pets', { key })],
  [
    201,
    'createPet',
    (s, key) => call(s, 'POST', '/v1/pets', { key, body: { name: 'Rex', categoryId: 1 } }),
  ],
  [400, 'invalid_parameter', (s, key) => call(s, 'GET', '/v1/pets?limit=0', { key })],
  [
    400,
    'invalid_json',
    (s, key) =>
      call(s, 'POST', '/v1/pets', {
        key,
        rawBody: '{',
        headers: { 'content-type': 'application/json' },
      }),
  ],
  [400, 'invalid_body', (s, key) => call(s, 'POST', '/v1/pets', { key, body: { name: '' } })],
  [401, 'unauthorized', (s) => call(s, 'GET', '/v1/pets')],
  [404, 'not_found pet', (s, key) => call(s, 'GET', '/v1/pets/999999999', { key })],
  [404, 'not_found path', (s, key) => call(s, 'GET', '/v1/nothing-here', { key })],
  [405, 'method_not_allowed', (s, key) => call(s, 'DELETE', '/v1/pets', { key })],
  [
    409,
    'idempotency_key_in_use',
    async (s, key) => {
      const idem = randomUUID();
      busy.add(idem); // a first request with this key is still running
      return call(s, 'POST', '/v1/pets', {
        key,
        body: { name: 'Busy', categoryId: 1 },
        headers: { 'idempotency-key': idem },
      });
    },
  ],
  [
    413,
    'payload_too_large',
    (s, key) =>
      call(s, 'POST', '/v1/pets', { key, body: { name: 'x'.repeat(20_000), categoryId: 1 } }),
  ],
  [
    415,
    'unsupported_media_type',
    (s, key) =>
      call(s, 'POST', '/v1/pets', {
        key,
        rawBody: 'name=Rex',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
  ],
  [
    422,
    'idempotency_key_reused',
    async (s, key) => {
      const headers = { 'idempotency-key': randomUUID() };
      await call(s, 'POST', '/v1/pets', { key, headers, body: { name: 'First', categoryId: 1 } });
      return call(s, 'POST', '/v1/pets', { key, headers, body: { name: 'Second', categoryId: 1 } });
    },
  ],
  [
    500,
    'internal_error',
    async (s, key) => {
      failLists = true;
      try {
        return await call(s, 'GET', '/v1/pets', { key });
      } finally {
        failLists = false;
      }
    },
  ],
];

describe('rate-limit headers on every status the API answers', () => {
  it.each(cases)('%i (%s)', async (status, _what, send) => {
    const s = server();
    const { key } = await s.createKey('business');
    const res = await send(s, key);
    expect(res.status).toBe(status);
    expectRateLimitHeaders(res.headers);
    expect(Object.keys(res.body as object).length === 3 || status < 300).toBe(true);
  });

  it('410 (gone, after the sunset)', async () => {
    const s = server();
    s.clock.set(GET_PET_SUNSET_AT + 1_000);
    const { key } = await s.createKey('business');
    const res = await call(s, 'GET', '/v1/pets/1', { key });
    expect(res.status).toBe(410);
    expectRateLimitHeaders(res.headers);
  });

  it('429 (rate_limited and api_key_banned), with Retry-After', async () => {
    const s = server();
    s.clock.set(Date.parse('2026-11-23T04:00:00Z'));
    const { key } = await s.createKey('enterprise', { perMinute: 1, perDay: 100 });
    expect((await call(s, 'GET', '/v1/pets', { key })).status).toBe(200);
    const codes = new Set<string>();
    for (let i = 0; i < 13; i++) {
      const res = await call(s, 'GET', '/v1/pets', { key });
      expect(res.status).toBe(429);
      expectRateLimitHeaders(res.headers);
      expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      codes.add((res.body as { code: string }).code);
    }
    expect([...codes]).toEqual(['rate_limited', 'api_key_banned']);
  });

  it('HEAD and the deprecated getPet carry them too', async () => {
    const s = server();
    s.clock.set(Date.parse('2026-11-23T03:00:00Z'));
    const { key } = await s.createKey('business');
    const head = await call(s, 'HEAD', '/v1/pets', { key });
    expect(head.status).toBe(200);
    expectRateLimitHeaders(head.headers);
    const created = await call(s, 'POST', '/v1/pets', {
      key,
      body: { name: 'Old', categoryId: 1 },
    });
    const res = await call(s, 'GET', `/v1/pets/${(created.body as { id: number }).id}`, { key });
    expect(res.status).toBe(200);
    expectRateLimitHeaders(res.headers);
    expect(res.headers.get('deprecation')).toMatch(/^@\d+$/);
  });

  it('are not sent outside /v1', async () => {
    const s = server();
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const res = await call(s, 'GET', path);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });
});

describe('requests refused before routing', () => {
  it('answers a path that is not valid percent-encoding with the Error body, counted like any other', async () => {
    const s = server();
    const { key } = await s.createKey('business');
    for (const path of ['/v1/pets/%', '/v1/pets/%E0%A4%A']) {
      const res = await call(s, 'GET', path, { key });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        code: 'bad_request',
        message: 'The request path is not valid percent-encoding',
        status: 400,
      });
      expectRateLimitHeaders(res.headers);
    }
    const anonymous = await call(s, 'GET', '/v1/pets/%');
    expect(anonymous.status).toBe(401);
    expectRateLimitHeaders(anonymous.headers);
    const outside = await call(s, 'GET', '/docs/%');
    expect(outside.status).toBe(400);
    expect(outside.body).toMatchObject({ code: 'bad_request', status: 400 });
  });
});
