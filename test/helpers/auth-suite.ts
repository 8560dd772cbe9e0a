import { beforeEach, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domain/api-keys/key-format.js';
import { call, type TestServer } from './test-server.js';

export interface RouteUnderTest {
  method: string;
  path: string;
  body?: unknown;
  /** The status a valid key gets (proves the key, not the route, was refused). */
  okStatus: number;
}

function flipChecksum(key: string): string {
  const last = key.at(-1) === 'a' ? 'b' : 'a';
  return key.slice(0, -1) + last;
}

/**
 * The same authentication checks for every route: each way a credential can be wrong gives 401
 * with the Error body and a Bearer challenge, and changes nothing.
 */
export function describeAuthSuite(server: () => TestServer, route: RouteUnderTest): void {
  const send = (headers: Record<string, string>) =>
    call(server(), route.method, route.path, {
      ...(route.body === undefined ? {} : { body: route.body }),
      headers,
    });

  const expect401 = async (headers: Record<string, string>, challenge: string) => {
    const before = await server().storage.pets.list({ afterId: 0, limit: 1_000_000 });
    const res = await send(headers);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(Object.keys(res.body as object).sort()).toEqual(['code', 'message', 'status']);
    expect(res.headers.get('www-authenticate')).toBe(challenge);
    expect(await server().storage.pets.list({ afterId: 0, limit: 1_000_000 })).toHaveLength(
      before.length,
    );
  };
  const plain = 'Bearer realm="pets"';
  const invalid = 'Bearer realm="pets", error="invalid_token"';

  describe(`${route.method} ${route.path}: authentication`, () => {
    // Requests without a valid key share a budget of 30 a minute per address; each check starts a
    // fresh minute so the suite tests authentication, not that budget.
    beforeEach(() => {
      server().clock.advance(60_000);
    });

    it('returns 401 with a Bearer challenge when Authorization is missing', async () => {
      await expect401({}, plain);
    });

    it('returns 401 invalid_token for another scheme', async () => {
      const { key } = await server().createKey();
      await expect401({ authorization: `Basic ${key}` }, invalid);
    });

    it('returns 401 invalid_token for an empty token', async () => {
      await expect401({ authorization: 'Bearer ' }, invalid);
    });

    it('returns 401 invalid_token for a malformed token', async () => {
      await expect401({ authorization: 'Bearer not-a-key' }, invalid);
    });

    it('returns 401 invalid_token for a key whose checksum is wrong', async () => {
      const { key } = await server().createKey();
      await expect401({ authorization: `Bearer ${flipChecksum(key)}` }, invalid);
    });

    it('returns 401 invalid_token for a well-formed key that was never issued', async () => {
      await expect401({ authorization: `Bearer ${generateApiKey('production')}` }, invalid);
    });

    it('returns 401 invalid_token for a staging key on a production server', async () => {
      await expect401({ authorization: `Bearer ${generateApiKey('staging')}` }, invalid);
    });

    it('returns 401 invalid_token for a revoked key, within 5 seconds of revocation elsewhere', async () => {
      const { id, key } = await server().createKey();
      expect((await send({ authorization: `Bearer ${key}` })).status).toBe(route.okStatus);
      // Revoked through another process (the CLI, another instance): this server only has its cache.
      await server().storage.apiKeys.revoke(id, server().clock.now());
      server().clock.advance(5_000);
      await expect401({ authorization: `Bearer ${key}` }, invalid);
    });

    it('accepts the scheme word in any case', async () => {
      const { key } = await server().createKey();
      expect((await send({ authorization: `bEaReR ${key}` })).status).toBe(route.okStatus);
    });
  });
}
