import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectErrorContract } from '../helpers/error-contract.js';
import { rawRequest } from '../helpers/raw-http.js';
import { call, useServer } from '../helpers/test-server.js';

const server = useServer();
let key = '';
let other = '';
beforeAll(async () => {
  key = (await server().createKey()).key;
  other = (await server().createKey()).key;
});
// Requests without a valid key draw on the address budget (30 a minute): a fresh minute each.
beforeEach(() => {
  server().clock.advance(60_000);
});

const body = JSON.stringify({ name: 'Two headers', categoryId: 1 });

/** A request with these Authorization lines, written as is (fetch would join them into one). */
function request(method: 'GET' | 'POST', authorizations: string[]): string {
  const lines = authorizations.map((value) => `Authorization: ${value}\r\n`).join('');
  return method === 'GET'
    ? `GET /v1/pets HTTP/1.1\r\nHost: x\r\n${lines}Connection: close\r\n\r\n`
    : `POST /v1/pets HTTP/1.1\r\nHost: x\r\n${lines}Content-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
}

async function petCount(): Promise<number> {
  return (await server().storage.pets.list({ afterId: 0, limit: 1_000_000 })).length;
}

describe('two Authorization headers', () => {
  it('returns 400 bad_request with the Error body when both carry the same valid key', async () => {
    const res = await rawRequest(server().url, request('GET', [`Bearer ${key}`, `Bearer ${key}`]));

    expectErrorContract(res, 'bad_request', 400);
    expect(JSON.parse(res.body)).toMatchObject({
      message: expect.stringContaining('more than one Authorization header'),
    });
  });

  it('returns 400 and creates nothing when a POST carries two valid keys, in any letter case', async () => {
    const before = await petCount();

    const res = await rawRequest(
      server().url,
      request('POST', [`Bearer ${key}`, `Bearer ${other}`]).replace(
        'Authorization: Bearer ' + other,
        'authorization: Bearer ' + other,
      ),
    );

    expectErrorContract(res, 'bad_request', 400);
    expect(await petCount()).toBe(before);
  });

  it('returns 400 when one of the two is not a key at all', async () => {
    const res = await rawRequest(
      server().url,
      request('GET', ['Basic Zm9vOmJhcg==', `Bearer ${key}`]),
    );

    expectErrorContract(res, 'bad_request', 400);
  });

  it('counts the refusal against the address budget, and says so in the rate-limit headers', async () => {
    const res = await rawRequest(server().url, request('GET', [`Bearer ${key}`, `Bearer ${key}`]));

    expect(res.status).toBe(400);
    expect(res.headers['x-ratelimit-limit']).toBe('30');
    expect(res.headers['x-ratelimit-remaining']).toBe('29');
  });

  it('answers 429 rather than 400 once the address budget is spent', async () => {
    for (let i = 0; i < 30; i++) {
      expect((await call(server(), 'GET', '/v1/pets', { headers: {} })).status).toBe(401);
    }

    const res = await rawRequest(server().url, request('GET', [`Bearer ${key}`, `Bearer ${key}`]));

    expectErrorContract(res, 'rate_limited', 429);
  });

  it('still serves one Authorization header written the same way (201)', async () => {
    const res = await rawRequest(server().url, request('POST', [`Bearer ${key}`]));

    expect(res.status).toBe(201);
  });

  it('treats one header holding two comma-joined values as one malformed key (401)', async () => {
    // What fetch and most clients send when told to add the header twice.
    const res = await rawRequest(server().url, request('GET', [`Bearer ${key}, Bearer ${key}`]));

    expectErrorContract(res, 'unauthorized', 401);
  });
});

describe('a 401 says what is wrong with the key, in words a person can act on', () => {
  /** One character changed in the middle: the check characters catch it. */
  const typo = (k: string) => {
    const at = 15;
    return k.slice(0, at) + (k[at] === 'a' ? 'b' : 'a') + k.slice(at + 1);
  };

  it.each([
    ['a one-character typo', () => `Bearer ${typo(key)}`, /a character is wrong/],
    [
      'a key of the other environment',
      () => `Bearer ${key.replace('pa_live_', 'pa_test_')}`,
      /other environment: a pa_test_ key is for staging/,
    ],
    [
      'the Basic scheme',
      () => 'Basic dXNlcjpwYXNz',
      /uses the Basic scheme; send Authorization: Bearer/,
    ],
    [
      'an admin token',
      () => `Bearer pa_admin_${'a'.repeat(36)}`,
      /admin token opens the admin API/,
    ],
  ])(
    '%s: 401 unauthorized, its own message, the credential not repeated',
    async (_, header, message) => {
      const authorization = header();
      const res = await rawRequest(server().url, request('GET', [authorization]));
      expectErrorContract(res, 'unauthorized', 401);
      const { message: text } = JSON.parse(res.body) as { message: string };
      expect(text).toMatch(message);
      const credential = authorization.split(' ')[1] ?? '';
      expect(text).not.toContain(credential.slice(9));
    },
  );
});
