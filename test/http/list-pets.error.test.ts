import { describe, expect, it } from 'vitest';
import { call, useServer } from '../helpers/test-server.js';

const server = useServer();

describe('GET /v1/pets (listPets), when the query is wrong', () => {
  it.each(['0', '101', '-1', 'abc', '1.5', '', '1e2', '99999999999999999999999'])(
    'returns 400 invalid_parameter when limit is %j',
    async (limit) => {
      const { key } = await server().createKey();
      const res = await call(server(), 'GET', `/v1/pets?limit=${encodeURIComponent(limit)}`, {
        key,
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        code: 'invalid_parameter',
        message: 'limit must be an integer from 1 to 100',
        status: 400,
      });
    },
  );

  it('returns 400 invalid_parameter naming status when status=adopted', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'GET', '/v1/pets?status=adopted', { key });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_parameter', status: 400 });
    expect((res.body as { message: string }).message).toBe(
      'status must be one of available, pending, sold',
    );
  });

  it('returns 400 invalid_parameter when limit is given twice', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'GET', '/v1/pets?limit=2&limit=3', { key });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'invalid_parameter',
      message: 'limit must be given once',
    });
  });

  it('returns 400 invalid_parameter naming an unknown query parameter', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'GET', '/v1/pets?statuss=sold', { key });
    expect(res.status).toBe(400);
    expect((res.body as { message: string }).message).toContain('statuss');
  });

  it.each(['garbage', 'cDF8MTI=', 'cDF8YWJjfA', '%%%', 'x'.repeat(300)])(
    'returns 400 invalid_parameter when cursor is %j',
    async (cursor) => {
      const { key } = await server().createKey();
      const res = await call(server(), 'GET', `/v1/pets?cursor=${encodeURIComponent(cursor)}`, {
        key,
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_parameter', status: 400 });
      expect((res.body as { message: string }).message).toMatch(/cursor/);
    },
  );

  it('returns 400 invalid_parameter when the cursor is empty, also once the first page is cached', async () => {
    // Found by the fuzz suite: the page cache keyed a missing and an empty cursor alike.
    const { key } = await server().createKey();
    // One more pet than the page holds: only a page with a next one is cached.
    for (let i = 0; i < 8; i++) {
      await call(server(), 'POST', '/v1/pets', { key, body: { name: `E${i}`, categoryId: 1 } });
    }
    const first = await call(server(), 'GET', '/v1/pets?limit=7', { key });
    expect(first.status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await call(server(), 'GET', '/v1/pets?limit=7&cursor=', { key });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_parameter', status: 400 });
    }
  });

  it('returns 400 invalid_parameter when a cursor is used with another status filter', async () => {
    const { key } = await server().createKey();
    for (let i = 0; i < 3; i++) {
      await call(server(), 'POST', '/v1/pets', {
        key,
        body: { name: `A${i}`, categoryId: 1, status: 'sold' },
      });
    }
    const first = await call(server(), 'GET', '/v1/pets?status=sold&limit=1', { key });
    const cursor = /cursor=([^&>]+)/.exec(first.headers.get('link') ?? '')?.[1];
    expect(cursor).toBeDefined();
    const res = await call(server(), 'GET', `/v1/pets?status=pending&cursor=${cursor}`, { key });
    expect(res.status).toBe(400);
    expect((res.body as { message: string }).message).toContain('status=sold');
    const unfiltered = await call(server(), 'GET', `/v1/pets?cursor=${cursor}`, { key });
    expect(unfiltered.status).toBe(400);
  });
});
