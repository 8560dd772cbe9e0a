import { connect } from 'node:net';
import { BUILD_VERSION } from '../../src/build-info.js';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMEOUTS } from '../../src/config/config.js';
import { rawConnect } from '../helpers/raw-http.js';
import { overlayStorage } from '../helpers/storage-overlay.js';
import { call, startServer, TEST_BACKEND, useServer } from '../helpers/test-server.js';

const server = useServer();

describe('around the operations', () => {
  it('answers unknown paths outside /v1 with a 404 Error body', async () => {
    const res = await call(server(), 'GET', '/nope');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'not_found', status: 404 });
  });

  it('answers unknown /v1 paths with 404 once the key is valid', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'GET', '/v1/owners', { key });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'not_found', status: 404 });
  });

  it.each([
    ['DELETE', '/v1/pets', 'GET, HEAD, POST'],
    ['PUT', '/v1/pets/1', 'GET, HEAD'],
    ['PATCH', '/v1/pets/1', 'GET, HEAD'],
    ['POST', '/v1/pets/1', 'GET, HEAD'],
  ])('returns 405 method_not_allowed with Allow for %s %s', async (method, path, allow) => {
    const { key } = await server().createKey();
    const res = await call(server(), method, path, { key });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect(res.body).toMatchObject({ code: 'method_not_allowed', status: 405 });
  });

  it('generates an X-Request-Id, and keeps a sane one the client sent', async () => {
    const generated = await call(server(), 'GET', '/healthz');
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await call(server(), 'GET', '/healthz', {
      headers: { 'x-request-id': 'abc-123.X' },
    });
    expect(kept.headers.get('x-request-id')).toBe('abc-123.X');
    const replaced = await call(server(), 'GET', '/healthz', {
      headers: { 'x-request-id': 'bad id <script>' },
    });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("sends a JSON API's security headers on JSON, and a web page's only on /docs", async () => {
    const { key } = await server().createKey();
    const json = await call(server(), 'GET', '/v1/pets', { key });
    expect(json.headers.get('x-content-type-options')).toBe('nosniff');
    expect(json.headers.get('content-security-policy')).toBe(
      "default-src 'none'; frame-ancestors 'none'",
    );
    for (const pageHeader of [
      'cross-origin-opener-policy',
      'x-dns-prefetch-control',
      'origin-agent-cluster',
    ]) {
      expect(json.headers.get(pageHeader), pageHeader).toBeNull();
    }
    const page = await call(server(), 'GET', '/docs');
    expect(page.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
  });

  it('sends X-Request-Id and security headers on errors too', async () => {
    const res = await call(server(), 'GET', '/v1/pets');
    expect(res.status).toBe(401);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('strict-transport-security')).toContain('max-age=');
  });

  it('reports liveness and readiness without a key', async () => {
    expect((await call(server(), 'GET', '/healthz')).body).toEqual({
      status: 'ok',
      version: BUILD_VERSION,
    });
    const ready = await call(server(), 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual(
      TEST_BACKEND === 'postgres'
        ? { status: 'ready', database: 'postgres', redis: 'redis' }
        : { status: 'ready', database: 'sqlite' },
    );
  });

  it('serves the docs page without a key', async () => {
    const res = await call(server(), 'GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.text).toContain('swagger');
  });

  it('hides internals behind a 500 internal_error when storage fails', async () => {
    const local = await startServer();
    try {
      const { key } = await local.createKey();
      local.storage.pets.list = async () => {
        throw new Error('SQLITE_CORRUPT: secret table detail');
      };
      const res = await call(local, 'GET', '/v1/pets', { key });
      expect(res.status).toBe(500);
      expect(res.body).toMatchObject({ code: 'internal_error', status: 500 });
      expect(res.text).not.toContain('SQLITE');
    } finally {
      await local.close();
    }
  });
});

describe('a client that closes its sending side after its request', () => {
  // Stores each pet 100 ms late, so the client's FIN arrives long before the answer is ready.
  const slow = useServer({
    wrapStorage: (storage) =>
      overlayStorage(storage, {
        pets: {
          create: async (input) => {
            await new Promise((resolve) => setTimeout(resolve, 100));
            return storage.pets.create(input);
          },
        },
      }),
  });

  it('still gets the answer (HTTP over a half-closed connection)', async () => {
    const { key } = await slow().createKey('pro');
    const body = JSON.stringify({ name: 'Half-closed', categoryId: 1 });
    const socket = connect(Number(new URL(slow().url).port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // As `printf ... | nc` does: the whole request, then FIN, then read.
    socket.end(
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    expect(answer).toMatch(/^HTTP\/1\.1 201 /);
  });
});

// The headers and request timeouts are measured in test/http/timeouts.test.ts.
describe('keep-alive', () => {
  const short = useServer({ env: { KEEP_ALIVE_TIMEOUT_MS: '1000' } });

  it('tells clients how long an idle connection is kept: KEEP_ALIVE_TIMEOUT_MS, 72 s by default', async () => {
    for (const [url, ms] of [
      [server().url, DEFAULT_TIMEOUTS.keepAliveMs],
      [short().url, 1000],
    ] as const) {
      const connection = await rawConnect(url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      try {
        const res = await connection.response();
        expect(res.headers.connection).toBe('keep-alive');
        expect(res.headers['keep-alive']).toBe(`timeout=${ms / 1000}`);
      } finally {
        connection.socket.destroy();
      }
    }
  });

  it('serves several requests on one connection, then closes it once idle that long', async () => {
    const request = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
    const connection = await rawConnect(short().url, request);
    expect((await connection.response()).status).toBe(200);
    connection.socket.write(request);
    await expect.poll(() => connection.received().match(/HTTP\/1\.1 200/g)?.length).toBe(2);
    const answered = Date.now();
    const { error } = await connection.closed;
    expect(error).toBeUndefined();
    // Not before the timeout; the default would keep it 72 s, far past this test's timeout.
    expect(Date.now() - answered).toBeGreaterThanOrEqual(900);
  });
});
