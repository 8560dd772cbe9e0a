import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { expectErrorContract } from '../helpers/error-contract.js';
import { rawRequest } from '../helpers/raw-http.js';
import { type TestServer, useServer } from '../helpers/test-server.js';

const server = useServer();

/** node:http, because fetch refuses to send TRACE and other methods on its forbidden list. */
function send(
  s: TestServer,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; allow: string | undefined; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(`${s.url}${path}`, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          allow: res.headers.allow,
          body: text === '' ? undefined : (JSON.parse(text) as unknown),
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('methods a path does not serve', () => {
  it.each(['TRACE', 'SEARCH', 'PROPFIND', 'DELETE', 'OPTIONS', 'PUT', 'PATCH', 'LOCK'])(
    'answers %s /v1/pets with 405 and Allow, after authentication',
    async (method) => {
      const { key } = await server().createKey();
      const res = await send(server(), method, '/v1/pets', { authorization: `Bearer ${key}` });
      expect(res.status).toBe(405);
      expect(res.allow).toBe('GET, HEAD, POST');
      expect(res.body).toMatchObject({ code: 'method_not_allowed', status: 405 });
      const anonymous = await send(server(), method, '/v1/pets');
      expect(anonymous.status).toBe(401);
    },
  );

  it('answers QUERY /v1/pets/1 with 405, with or without a Content-Type', async () => {
    const { key } = await server().createKey();
    const auth = { authorization: `Bearer ${key}` };
    for (const headers of [auth, { ...auth, 'content-type': 'text/plain' }]) {
      const res = await send(server(), 'QUERY', '/v1/pets/1', headers, 'x');
      expect(res.status).toBe(405);
      expect(res.allow).toBe('GET, HEAD');
    }
  });

  it('answers a refused PUT with 405 whatever its body, before reading it', async () => {
    const { key } = await server().createKey();
    const res = await send(
      server(),
      'PUT',
      '/v1/pets',
      { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded' },
      'name=Rex',
    );
    expect(res.status).toBe(405);
  });

  it.each(['/healthz', '/readyz', '/metrics', '/v1/openapi.json'])(
    'answers TRACE and POST %s with 405 and Allow: GET, HEAD',
    async (path) => {
      for (const method of ['TRACE', 'POST']) {
        const res = await send(server(), method, path);
        expect(res.status, method).toBe(405);
        expect(res.allow).toBe('GET, HEAD');
      }
    },
  );

  it('still answers an unknown path with 404, whatever the method', async () => {
    const res = await send(server(), 'TRACE', '/nope');
    expect(res.status).toBe(404);
  });

  it('answers an unknown path under /v1 with 404 before reading its body', async () => {
    // Found by the fuzz suite: the body was parsed first, so a bad one made it a 400 invalid_json.
    const { key } = await server().createKey();
    for (const body of ['', '{', '{"a":1,"a":2}']) {
      const res = await send(
        server(),
        'PATCH',
        '/v1/nope',
        { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
      );
      expect(res).toMatchObject({ status: 404, body: { code: 'not_found', status: 404 } });
    }
  });

  it.each(['/nope', '/v1x', '/docs/nope.json'])(
    'answers POST %s, a path no route serves, with 404 before reading its body',
    async (path) => {
      for (const body of ['{', '{"a":1,"a":2}']) {
        const res = await send(
          server(),
          'POST',
          path,
          { 'content-type': 'application/json' },
          body,
        );
        expect(res).toMatchObject({ status: 404, body: { code: 'not_found', status: 404 } });
      }
    },
  );

  it('answers CONNECT, a tunnel it never opens, with 400 and the Error body instead of hanging up', async () => {
    // Found by the fuzz suite: with no 'connect' listener Node closed the connection unanswered.
    const res = await rawRequest(
      server().url,
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
    );
    expectErrorContract(res, 'bad_request', 400);
    expect(res.headers.connection).toBe('close');
  });
});
