import { describe, expect, it } from 'vitest';
import { call, startServer, useServer } from '../helpers/test-server.js';
import { TestClock } from '../helpers/test-clock.js';

const server = useServer();

function expectDeprecationHeaders(headers: Headers, base: string): void {
  expect(headers.get('deprecation')).toMatch(/^@\d+$/);
  expect(Number(headers.get('deprecation')!.slice(1)) * 1000).toBeLessThan(Date.now());
  expect(headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
  expect(headers.get('link')).toBe(`<${base}/v1/pets>; rel="successor-version"`);
}

describe('GET /v1/pets/{petId} (getPet, deprecated)', () => {
  it('returns 200 and the pet, with Deprecation, Sunset and successor Link headers', async () => {
    const { key } = await server().createKey();
    const created = await call(server(), 'POST', '/v1/pets', {
      key,
      body: { name: 'Old', categoryId: 5 },
    });
    const { id } = created.body as { id: number };
    const res = await call(server(), 'GET', `/v1/pets/${id}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id, name: 'Old', categoryId: 5 });
    expectDeprecationHeaders(res.headers, server().config.publicBaseUrl);
  });

  it('returns 404 not_found for an id that does not exist, with the deprecation headers', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'GET', '/v1/pets/9223372036854775807', { key });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'not_found', status: 404 });
    expectDeprecationHeaders(res.headers, server().config.publicBaseUrl);
  });

  it('carries the deprecation headers on 401 too', async () => {
    const res = await call(server(), 'GET', '/v1/pets/1');
    expect(res.status).toBe(401);
    expectDeprecationHeaders(res.headers, server().config.publicBaseUrl);
  });

  it.each(['0', '-1', 'abc', '1.5', '9223372036854775808', '1e3', '%20'])(
    'returns 400 invalid_parameter when petId is %j',
    async (petId) => {
      const { key } = await server().createKey();
      const res = await call(server(), 'GET', `/v1/pets/${petId}`, { key });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        code: 'invalid_parameter',
        message: 'petId must be an integer from 1 to 9223372036854775807',
        status: 400,
      });
    },
  );

  it('answers 410 gone from the sunset date on, and 200 the millisecond before', async () => {
    const clock = new TestClock(Date.UTC(2030, 11, 4, 23, 59, 59, 999));
    const local = await startServer({ clock });
    try {
      const { key } = await local.createKey();
      const created = await call(local, 'POST', '/v1/pets', {
        key,
        body: { name: 'Last', categoryId: 1 },
      });
      const path = `/v1/pets/${(created.body as { id: number }).id}`;
      expect((await call(local, 'GET', path, { key })).status).toBe(200);
      clock.advance(1);
      const gone = await call(local, 'GET', path, { key });
      expect(gone.status).toBe(410);
      expect(gone.body).toMatchObject({ code: 'gone', status: 410 });
      expectDeprecationHeaders(gone.headers, local.config.publicBaseUrl);
      expect((await call(local, 'GET', '/v1/pets/abc', { key })).status).toBe(410);
      expect((await call(local, 'GET', '/v1/pets', { key })).status).toBe(200);
    } finally {
      await local.close();
    }
  });
});
