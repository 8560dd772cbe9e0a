import { afterAll, describe, expect, it } from 'vitest';
import { expectErrorContract } from '../helpers/error-contract.js';
import { rawConnect, type RawConnection, type RawResponse } from '../helpers/raw-http.js';
import { useServer } from '../helpers/test-server.js';

// A short headers timeout so that the 408 comes in about a second.
const server = useServer({ env: { HEADERS_TIMEOUT_MS: '1000' } });

const connections: RawConnection[] = [];
afterAll(() => {
  for (const connection of connections) connection.socket.destroy();
});

/** A raw request from a loopback address of the test's own, so that the budget is its alone. */
async function send(
  payload: string,
  localAddress: string,
  timeoutMs = 5_000,
): Promise<RawResponse> {
  const connection = await rawConnect(server().url, payload, { localAddress });
  connections.push(connection);
  return connection.response(timeoutMs);
}

const ANONYMOUS = 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
const big = 'a'.repeat(20_000);

describe('refusals made before routing carry the address budget, without drawing on it', () => {
  it.each([
    [
      '431 (headers over 16 KiB)',
      `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-big: ${big}\r\n\r\n`,
      431,
      '127.0.0.21',
    ],
    [
      '400 (bad framing)',
      'POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
      400,
      '127.0.0.22',
    ],
    ['408 (headers timeout)', 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-slow: ', 408, '127.0.0.23'],
  ])(
    'a %s has X-RateLimit-* and RateLimit headers of the address',
    async (_what, payload, status, address) => {
      server().clock.set(Date.parse('2026-11-24T10:00:20Z'));
      for (let i = 0; i < 3; i++) expect((await send(ANONYMOUS, address)).status).toBe(401);

      const refused = await send(payload, address);
      expectErrorContract(
        refused,
        status === 431 ? 'headers_too_large' : status === 408 ? 'request_timeout' : 'bad_request',
        status,
      );
      expect(refused.headers['x-ratelimit-limit']).toBe('30');
      expect(refused.headers['x-ratelimit-remaining']).toBe('27');
      expect(refused.headers['x-ratelimit-reset']).toBe(
        String(Date.parse('2026-11-24T10:01:00Z') / 1000),
      );
      expect(refused.headers['ratelimit-policy']).toBe('"minute";q=30;w=60');
      expect(refused.headers.ratelimit).toBe('"minute";r=27;t=40');

      // Not drawn on: the next request without a key is the fourth of the minute.
      const next = await send(ANONYMOUS, address);
      expect(next.headers['x-ratelimit-remaining']).toBe('26');
    },
  );
});
