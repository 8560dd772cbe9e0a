import { beforeAll, describe, expect, it } from 'vitest';
import { expectErrorContract } from '../helpers/error-contract.js';
import { parseResponse, rawConnect, rawRequest } from '../helpers/raw-http.js';
import { startServer, useServer } from '../helpers/test-server.js';

const server = useServer();
let key = '';
beforeAll(async () => {
  key = (await server().createKey()).key;
});

const big = 'a'.repeat(20_000);
const POST = 'POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n';

describe('requests Node refuses before routing', () => {
  it.each([
    ['headers over 16 KiB', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-big: ${big}\r\n\r\n`, 431],
    ['a path over 16 KiB', `GET /${big} HTTP/1.1\r\nHost: x\r\n\r\n`, 431],
    ['an invalid Transfer-Encoding', `${POST}Transfer-Encoding: chunked, gzip\r\n\r\n`, 400],
    ['a Content-Length that is not a number', `${POST}Content-Length: abc\r\n\r\n`, 400],
    ['two Content-Lengths', `${POST}Content-Length: 1\r\nContent-Length: 2\r\n\r\nab`, 400],
    [
      'Content-Length beside Transfer-Encoding',
      `${POST}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      400,
    ],
    ['a request line that is not HTTP', 'HELLO\r\n\r\n', 400],
    ['an unknown HTTP version', 'GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n', 400],
    ['a header name with a space', 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n', 400],
  ])('answers %s with the Error body and closes', async (_what, payload, status) => {
    const res = await rawRequest(server().url, payload);
    expectErrorContract(res, status === 431 ? 'headers_too_large' : 'bad_request', status);
    expect(res.headers.connection).toBe('close');
    expect((await res.closed).error).toBeUndefined();
  });

  it('answers a chunk that is not hexadecimal, in a body under way, with the Error body', async () => {
    const res = await rawRequest(
      server().url,
      `${POST}Authorization: Bearer ${key}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`,
    );
    expectErrorContract(res, 'bad_request', 400);
    expect(res.headers.connection).toBe('close');
  });

  it('keeps reading for a moment after a refusal, so a client still sending gets no reset', async () => {
    const connection = await rawConnect(server().url, 'HELLO\r\n\r\n', { allowHalfOpen: true });
    let error: string | undefined;
    connection.socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code));
    expect((await connection.response()).status).toBe(400);
    await connection.closed; // the server's FIN: its side is done writing
    for (let i = 0; i < 5; i++) {
      connection.socket.write(`X-more: ${i}\r\n`);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(error).toBeUndefined();
    connection.socket.destroy();
  });

  it('gives a refusal of a request under way the X-Request-Id its log lines carry', async () => {
    const logLines: string[] = [];
    const logged = await startServer({ logLines });
    try {
      const { key: loggedKey } = await logged.createKey();
      const res = await rawRequest(
        logged.url,
        `${POST}Authorization: Bearer ${loggedKey}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`,
      );
      const id = res.headers['x-request-id'];
      const lines = logLines.map((line) => JSON.parse(line) as { requestId?: string; msg: string });
      expect(lines.find((line) => line.msg === 'incoming request')?.requestId).toBe(id);
      expect(lines.find((line) => line.msg.includes('not valid HTTP/1.1'))?.requestId).toBe(id);
    } finally {
      await logged.close();
    }
  });

  it('answers the requests before a malformed one pipelined behind them, then closes', async () => {
    const connection = await rawConnect(
      server().url,
      'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nHELLO\r\n\r\n',
    );
    expect((await connection.closed).error).toBeUndefined();
    const first = parseResponse(connection.received());
    expect(first?.status).toBe(200);
    expect(first?.headers.connection).toBe('close');
    expect(connection.received().match(/HTTP\/1\.1 /g)).toHaveLength(1);
  });

  it('answers every request pipelined before a malformed one, in order, then closes', async () => {
    // Issue 34 item 8: the requests read ahead of the bad one all ran, but only the first was
    // answered (an admin key created and its secret never sent).
    const paths = ['/healthz', '/v1/pets?limit=1', '/healthz', '/v1/pets?limit=2', '/healthz'];
    const connection = await rawConnect(
      server().url,
      paths
        .map((path) => `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`)
        .join('') + 'HELLO\r\n\r\n',
    );
    expect((await connection.closed).error).toBeUndefined();
    const statuses = [...connection.received().matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
    expect(statuses).toHaveLength(paths.length);
    // In order: the two list answers carry a JSON array, the health answers an object.
    const bodies = connection
      .received()
      .split(/HTTP\/1\.1 /)
      .slice(1);
    expect(bodies.map((body) => body.includes('\r\n\r\n['))).toEqual([
      false,
      true,
      false,
      true,
      false,
    ]);
    expect(bodies.at(-1)).toMatch(/connection: close/i);
  });

  it('answers a request only once when its body turns out malformed after it was refused', async () => {
    // No key: 401 before the body is read; the bad chunk that follows gets no second answer.
    const connection = await rawConnect(server().url, `${POST}Transfer-Encoding: chunked\r\n\r\n`);
    await connection.response();
    connection.socket.write('zz\r\n');
    expect((await connection.closed).error).toBeUndefined();
    expect(parseResponse(connection.received())?.status).toBe(401);
    expect(connection.received().match(/HTTP\/1\.1 /g)).toHaveLength(1);
  });

  it('answers an HTTP/1.1 request without Host with the Error body', async () => {
    const res = await rawRequest(
      server().url,
      'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n',
    );
    expectErrorContract(res, 'bad_request', 400);
    expect(JSON.parse(res.body)).toMatchObject({ message: expect.stringContaining('Host') });
  });

  it('serves a request whose Expect it does not know, instead of a bare 417', async () => {
    const res = await rawRequest(
      server().url,
      'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n',
    );
    expect(res.status).toBe(200);
  });

  it('serves an HTTP/1.0 request without Host, which needs none', async () => {
    const res = await rawRequest(server().url, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(res.status).toBe(200);
  });

  it('keeps the X-Request-Id a client sent on a request it refuses once headers arrived', async () => {
    const res = await rawRequest(
      server().url,
      `${POST}Authorization: Bearer ${key}\r\nX-Request-Id: trace-42\r\n` +
        'Transfer-Encoding: chunked\r\n\r\nzz\r\n',
    );
    expect(res.headers['x-request-id']).toBe('trace-42');
  });
});

describe('the static files of /docs', () => {
  it.each([
    ['a path climbing out of the folder', '/docs/static/../x'],
    ['an encoded climb', '/docs/static/%2e%2e/%2e%2e/package.json'],
    ['a dotfile', '/docs/static/.hidden'],
    ['a missing asset', '/docs/static/nope.js'],
  ])('answers %s with 404 not_found', async (_what, path) => {
    const res = await rawRequest(
      server().url,
      `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expectErrorContract(res, 'not_found', 404);
  });

  it('still serves its assets', async () => {
    const res = await rawRequest(
      server().url,
      'GET /docs/static/index.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(res.status).toBe(200);
  });
});
