import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN_PREFIX, generateToken } from '../../../src/domain/api-keys/key-format.js';
import { AdminTokenService } from '../../../src/domain/admin-tokens/admin-token-service.js';
import { call } from '../../helpers/test-server.js';
import { adminCall, useAdminServer } from './admin-server.js';

const server = useAdminServer();

function expectUnauthorized(
  res: { status: number; headers: Headers; body: unknown },
  sent: boolean,
) {
  expect(res.status).toBe(401);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('www-authenticate')).toBe(
    sent ? 'Bearer realm="petstore-admin", error="invalid_token"' : 'Bearer realm="petstore-admin"',
  );
  expect(res.body).toMatchObject({ code: 'unauthorized', status: 401 });
  expect(Object.keys(res.body as object).sort()).toEqual(['code', 'message', 'status']);
}

describe('admin API authentication', () => {
  it('returns 401 unauthorized with WWW-Authenticate when no token is sent', async () => {
    expectUnauthorized(await adminCall(server(), 'GET', '/admin/v1/keys'), false);
  });

  it('returns 401 unauthorized when a pet API key is used as an admin token', async () => {
    const { key } = await server().pets.createKey('business');
    const res = await adminCall(server(), 'GET', '/admin/v1/keys', { key });
    expectUnauthorized(res, true);
    expect((res.body as { message: string }).message).toContain('pa_admin_');
  });

  it('returns 401 unauthorized for a well-formed admin token that was never issued', async () => {
    const made = generateToken(ADMIN_TOKEN_PREFIX);
    expectUnauthorized(await adminCall(server(), 'GET', '/admin/v1/keys', { key: made }), true);
  });

  it('returns 401 unauthorized for a revoked admin token, on every instance within the cache lifetime', async () => {
    const { id, token } = await server().createToken('to-revoke');
    expect((await adminCall(server(), 'GET', '/admin/v1/keys', { key: token })).status).not.toBe(
      401,
    );
    // Revoked by another process (the CLI): this server still holds the token in its cache.
    expect(await server().services.admin.tokens.revoke(id)).toBe(true);
    server().pets.clock.advance(AdminTokenService.CACHE_TTL_MS + 1);
    expectUnauthorized(await adminCall(server(), 'GET', '/admin/v1/keys', { key: token }), true);
  });

  it('returns 401 on the pet listener for an admin token, as for any invalid key', async () => {
    const { token } = await server().createToken();
    const res = await call(server().pets, 'GET', '/v1/pets', { key: token });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="pets", error="invalid_token"');
    expect(res.body).toMatchObject({ code: 'unauthorized', status: 401 });
  });

  it('refuses guessing past the address budget with 429 before any token lookup', async () => {
    const lookups: string[] = [];
    const store = server().services.storage.adminTokens;
    const original = store.findByHash.bind(store);
    store.findByHash = async (hash) => {
      lookups.push(hash);
      return original(hash);
    };
    try {
      let last = { status: 0, headers: new Headers(), body: undefined as unknown };
      for (let i = 0; i < 40 && last.status !== 429; i++) {
        last = await adminCall(server(), 'GET', '/admin/v1/keys');
      }
      expect(last.status).toBe(429);
      expect(last.body).toMatchObject({ code: 'rate_limited', status: 429 });
      expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const before = lookups.length;
      const fresh = await server().services.admin.tokens.create('unseen');
      const res = await adminCall(server(), 'GET', '/admin/v1/keys', { key: fresh.token });
      expect(res.status).toBe(429);
      expect(lookups.length).toBe(before);
    } finally {
      store.findByHash = original;
      server().pets.clock.advance(60_000);
    }
  });
});

describe('the two listeners', () => {
  it('the pet listener answers 404 with the Error body under /admin/v1', async () => {
    const { token } = await server().createToken();
    for (const path of ['/admin/v1/keys', '/admin/v1/openapi.json']) {
      const res = await call(server().pets, 'GET', path, { key: token });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'not_found', status: 404 });
    }
  });

  it('the admin listener answers 404 with the Error body under /v1 and for /docs, /healthz', async () => {
    const { key } = await server().pets.createKey();
    for (const path of ['/v1/pets', '/v1/openapi.json', '/docs', '/healthz', '/metrics']) {
      const res = await adminCall(server(), 'GET', path, { key });
      expect(res.status, path).toBe(404);
      expect(res.body).toMatchObject({ code: 'not_found', status: 404 });
    }
  });

  it('serves its own OpenAPI 3.1 document without a token', async () => {
    const res = await adminCall(server(), 'GET', '/admin/v1/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/keys', '/keys/{keyId}', '/keys/{keyId}/roll', '/audit']),
    );
    expect(Object.keys(doc.paths).some((p) => p.includes('pets'))).toBe(false);
  });

  it('answers 404 unknown paths under /admin/v1 only after authentication', async () => {
    expect((await adminCall(server(), 'GET', '/admin/v1/nothing')).status).toBe(401);
    const { token } = await server().createToken();
    const res = await adminCall(server(), 'GET', '/admin/v1/nothing', { key: token });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'not_found' });
  });

  it('answers 405 with Allow for a method a path does not serve', async () => {
    const { token } = await server().createToken();
    const res = await adminCall(server(), 'DELETE', '/admin/v1/keys', { key: token });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
  });
});

describe('admin logs', () => {
  const lines: string[] = [];
  const logged = useAdminServer({ logLines: lines });

  it('name the admin token id of every call and never hold a token or a key', async () => {
    const { id, token } = await logged().createToken('logged');
    const { key } = await logged().pets.createKey();
    await adminCall(logged(), 'GET', '/admin/v1/keys', { key: token });
    await adminCall(logged(), 'GET', `/admin/v1/keys/${'key_'.padEnd(20, 'x')}?t=${token}`, {
      key,
    });
    const text = lines.join('');
    expect(text).toContain(`"adminTokenId":"${id}"`);
    expect(text).not.toContain(token);
    expect(text).not.toContain(key);
  });
});

describe('admin guessing behind a trusted proxy (TRUST_PROXY=true)', () => {
  const proxied = useAdminServer({ env: { TRUST_PROXY: 'true' } });

  it.each([
    ['a made-up word', (i: number) => `guess-${i}`],
    ['an IPv4 address with a port', (i: number) => `192.0.2.${i}:8080`],
    ['12 KB of text', (i: number) => `${'a'.repeat(12 * 1024)}${i}`],
  ])(
    'counts %s in X-Forwarded-For against the connection own address: 429 after 30',
    async (_name, forwardedFor) => {
      const s = proxied();
      const guess = generateToken(ADMIN_TOKEN_PREFIX);
      for (let i = 0; i < 30; i++) {
        const res = await adminCall(s, 'GET', '/admin/v1/keys', {
          key: guess,
          headers: { 'x-forwarded-for': forwardedFor(i) },
        });
        expect(res.status).toBe(401);
      }
      const refused = await adminCall(s, 'GET', '/admin/v1/keys', {
        key: guess,
        headers: { 'x-forwarded-for': forwardedFor(30) },
      });
      expect(refused.status).toBe(429);
      // The same budget as the connection's own, without the header, for the document too.
      expect((await adminCall(s, 'GET', '/admin/v1/keys', { key: guess })).status).toBe(429);
      const document = await adminCall(s, 'GET', '/admin/v1/openapi.json', {
        headers: { 'x-forwarded-for': forwardedFor(31) },
      });
      expect(document.status).toBe(429);
      // The contract check at the end reads the document from this address.
      s.pets.clock.advance(60_000);
    },
  );
});
