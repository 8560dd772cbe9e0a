import { describe, expect, it } from 'vitest';
import { expectErrorContract } from '../helpers/error-contract.js';
import { rawRequest } from '../helpers/raw-http.js';
import { useServer } from '../helpers/test-server.js';

const server = useServer();

let nextAddress = 40;
const GET = 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';

/**
 * Issue 34 item 8: requests Node accepts but whose target or framing a proxy could read otherwise
 * were served (an absolute-form target got 404 with no authentication, no rate-limit headers and
 * no budget drawn). Each is refused with 400 and the Error body, drawn from its address's budget.
 */
describe('requests refused for their target or framing', () => {
  it.each([
    [
      'an absolute-form target',
      'GET http://x/v1/nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    ],
    [
      'an absolute-form target of a pet path',
      'GET http://x/v1/pets HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    ],
    ['two Host lines', 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nHost: y\r\nConnection: close\r\n\r\n'],
    ['two Host lines on HTTP/1.0', 'GET /healthz HTTP/1.0\r\nHost: x\r\nHost: y\r\n\r\n'],
    ['HTTP/0.9', 'GET /healthz\r\n\r\n'],
    [
      'Transfer-Encoding: identity, chunked',
      'POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: identity, chunked\r\nConnection: close\r\n\r\n0\r\n\r\n',
    ],
    [
      'TE: identity, chunked',
      'GET /v1/pets HTTP/1.1\r\nHost: x\r\nTE: identity, chunked\r\nConnection: close\r\n\r\n',
    ],
  ])('refuses %s with 400, the Error body and the address budget drawn', async (_what, payload) => {
    const s = server();
    // An address of its own per case: each starts with a whole budget.
    const localAddress = `127.0.0.${nextAddress++}`;
    const res = await rawRequest(s.url, payload, { localAddress });
    expectErrorContract(res, 'bad_request', 400);
    const remaining = Number(res.headers['x-ratelimit-remaining']);
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
    // The next keyless request from the address finds one fewer left: the refusal was counted.
    const next = await rawRequest(s.url, GET, { localAddress });
    expect(next.status).toBe(401);
    expect(Number(next.headers['x-ratelimit-remaining'])).toBe(remaining - 1);
    expect(remaining).toBeLessThan(Number(res.headers['x-ratelimit-limit']));
  });

  it('still serves an origin-form request with one Host, and OPTIONS *', async () => {
    const s = server();
    expect(
      (await rawRequest(s.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'))
        .status,
    ).toBe(200);
    const star = await rawRequest(
      s.url,
      'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(star.status).not.toBe(400);
  });
});
