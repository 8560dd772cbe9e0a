import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorContract } from '../helpers/error-contract.js';
import { rawConnect, type RawConnection } from '../helpers/raw-http.js';
import { useServer } from '../helpers/test-server.js';

// The limits, measured over real sockets, set short (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS) so
// the file takes seconds: a connection is closed no sooner than its limit and soon after it, far
// sooner than Node's own 30 s sweep would (src/http/http-server.ts checks a tenth as often as the
// limit lasts). The bound after it is loose: the scheduler of a busy machine sets it, not the code.
const HEADERS_MS = 1_000;
const REQUEST_MS = 2_000;
const SLACK_MS = 2_500;
const server = useServer({
  env: { HEADERS_TIMEOUT_MS: String(HEADERS_MS), REQUEST_TIMEOUT_MS: String(REQUEST_MS) },
});
let key = '';
beforeAll(async () => {
  key = (await server().createKey()).key;
});

const trickles = new Set<NodeJS.Timeout>();
const connections: RawConnection[] = [];
// Runs before the server closes (after-hooks run in reverse), so a failing test cannot hold it open.
afterAll(() => {
  for (const timer of trickles) clearInterval(timer);
  for (const connection of connections) connection.socket.destroy();
});

async function open(payload = ''): Promise<RawConnection> {
  const connection = await rawConnect(server().url, payload);
  connections.push(connection);
  return connection;
}

/**
 * Writes one more byte every 250 ms until the server answers or closes the connection. The server
 * closes a connection whose body is still arriving right after its 408 (the route must never see
 * that body); a byte sent after that close draws a reset, and a client that had not read the 408
 * yet loses it (seen once with 100 ms, on a busy machine). A client that keeps sending after the
 * answer can still lose it: README "Decisions a client must know".
 */
function trickle(connection: RawConnection, byte: string): void {
  const timer = setInterval(() => {
    if (connection.received() === '') connection.socket.write(byte);
  }, 250);
  trickles.add(timer);
  void connection.closed.then(() => {
    clearInterval(timer);
    trickles.delete(timer);
  });
}

describe.concurrent('request timeouts', () => {
  it('closes a connection whose headers keep trickling in after HEADERS_TIMEOUT_MS, with a 408', async () => {
    const connection = await open('GET /healthz HTTP/1.1\r\nHost: x\r\nX-a: ');
    trickle(connection, 'a');
    const { afterMs } = await connection.closed;
    expect(afterMs).toBeGreaterThanOrEqual(HEADERS_MS - 100);
    expect(afterMs).toBeLessThan(HEADERS_MS + SLACK_MS);
    const res = await connection.response(0);
    expectErrorContract(res, 'request_timeout', 408);
    expect(JSON.parse(res.body)).toMatchObject({
      message: 'The request headers did not arrive within 1 second',
    });
  });

  it('closes a connection that sends nothing after HEADERS_TIMEOUT_MS', async () => {
    const connection = await open();
    const { afterMs } = await connection.closed;
    expect(afterMs).toBeGreaterThanOrEqual(HEADERS_MS - 100);
    expect(afterMs).toBeLessThan(HEADERS_MS + SLACK_MS);
  });

  it('closes a connection whose body keeps trickling in after REQUEST_TIMEOUT_MS, with a 408', async () => {
    const connection = await open(
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n ',
    );
    trickle(connection, ' ');
    const { afterMs } = await connection.closed;
    expect(afterMs).toBeGreaterThanOrEqual(REQUEST_MS - 100);
    expect(afterMs).toBeLessThan(REQUEST_MS + SLACK_MS);
    const res = await connection.response(0);
    expectErrorContract(res, 'request_timeout', 408);
    expect(JSON.parse(res.body)).toMatchObject({
      message: 'The whole request did not arrive within 2 seconds',
    });
  });
});
