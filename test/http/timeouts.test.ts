import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorContract } from '../helpers/error-contract.js';
import { rawConnect, type RawConnection } from '../helpers/raw-http.js';
import { useServer } from '../helpers/test-server.js';
import { scaled } from '../helpers/machine.js';

// The limits, measured over real sockets, set short (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS) so
// the file takes seconds: a connection is closed no sooner than its limit and soon after it, far
// sooner than Node's own 30 s sweep would (src/http/server/api-server.ts checks a tenth as often as the
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

async function open(payload = '', allowHalfOpen = false): Promise<RawConnection> {
  const connection = await rawConnect(server().url, payload, { allowHalfOpen });
  connections.push(connection);
  return connection;
}

/** Writes one more byte every 250 ms until the server answers or closes the connection. */
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
    expect(afterMs).toBeLessThan(HEADERS_MS + scaled(SLACK_MS));
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
    expect(afterMs).toBeLessThan(HEADERS_MS + scaled(SLACK_MS));
  });

  it('closes a connection whose body keeps trickling in after REQUEST_TIMEOUT_MS, with a 408', async () => {
    const connection = await open(
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n ',
    );
    trickle(connection, ' ');
    const { afterMs } = await connection.closed;
    expect(afterMs).toBeGreaterThanOrEqual(REQUEST_MS - 100);
    expect(afterMs).toBeLessThan(REQUEST_MS + scaled(SLACK_MS));
    const res = await connection.response(0);
    expectErrorContract(res, 'request_timeout', 408);
    expect(JSON.parse(res.body)).toMatchObject({
      message: 'The whole request did not arrive within 2 seconds',
    });
  });

  it('keeps the 408 for a client that goes on sending and reads late: the connection lingers, no reset', async () => {
    const connection = await open(
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 10000\r\n\r\n ',
      true,
    );
    // Reads nothing until well after the 408 was sent, and sends all along: closing a connection
    // with bytes unread makes TCP reset it, and the client's next write then fails before it has
    // read the answer (a 408 lost so, once, made this test).
    connection.socket.pause();
    const sending = setInterval(() => connection.socket.write(' '.repeat(16)), 20);
    trickles.add(sending);
    await sleep(REQUEST_MS + 700);
    connection.socket.resume();
    const res = await connection.response(3_000);
    clearInterval(sending);
    expectErrorContract(res, 'request_timeout', 408);
  });

  it('never serves a body whose rest arrives after its 408, while the connection lingers', async () => {
    const name = 'Completed after its 408';
    const json = JSON.stringify({ name, categoryId: 1 });
    const length = 2_000;
    const connection = await open(
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n `,
      true,
    );
    let sent = 1;
    const sending = setInterval(() => {
      if (connection.received() !== '') return;
      connection.socket.write(' ');
      sent += 1;
    }, 250);
    trickles.add(sending);
    const res = await connection.response(REQUEST_MS + scaled(SLACK_MS));
    clearInterval(sending);
    expectErrorContract(res, 'request_timeout', 408);
    // The rest of the body, whole and valid, within the lingering second.
    connection.socket.write(' '.repeat(length - sent - json.length) + json);
    await sleep(500);
    const listed = await fetch(`${server().url}/v1/pets?limit=100`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(listed.status).toBe(200);
    const page = (await listed.json()) as Array<{ name: string }>;
    expect(page.map((pet) => pet.name)).not.toContain(name);
  });
});
