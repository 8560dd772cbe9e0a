import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from '../helpers/test-server.js';

const ORIGIN = 'https://shelter.example.com';

describe('CORS', () => {
  let withCors: TestServer;
  let without: TestServer;
  beforeAll(async () => {
    withCors = await startServer({ env: { CORS_ORIGINS: ORIGIN } });
    without = await startServer();
  });
  afterAll(async () => {
    await Promise.all([withCors.close(), without.close()]);
  });

  it('is off by default: no Access-Control-Allow-Origin for any origin', async () => {
    const { key } = await without.createKey();
    const res = await call(without, 'GET', '/v1/pets', { key, headers: { origin: ORIGIN } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers a preflight from a listed origin before authentication', async () => {
    const res = await call(withCors, 'OPTIONS', '/v1/pets', {
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, idempotency-key',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(ORIGIN);
  });

  it('exposes Link and Location to a listed origin, and nothing to others', async () => {
    const { key } = await withCors.createKey();
    const listed = await call(withCors, 'GET', '/v1/pets', { key, headers: { origin: ORIGIN } });
    expect(listed.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(listed.headers.get('access-control-expose-headers')).toContain('Link');
    const other = await call(withCors, 'GET', '/v1/pets', {
      key,
      headers: { origin: 'https://evil.example' },
    });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});
