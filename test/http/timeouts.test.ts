import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorContract } from '../helpers/error-contract.js';
import { rawConnect, type RawConnection } from '../helpers/raw-http.js';
import { useServer } from '../helpers/test-server.js';

// The documented limits, measured over real sockets with the default settings: headers within 10 s,
// the whole request within 30 s, each enforced within about a second. The tests run side by side,
// so the file takes about 31 s.
const server = useServer();
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

/** Writes one more byte every second until the server closes the connection. */
function trickle(connection: RawConnection, byte: string): void {
  const timer = setInterval(() => connection.socket.write(byte), 1_000);
  trickles.add(timer);
  void connection.closed.then(() => {
    clearInterval(timer);
    trickles.delete(timer);
  });
}

describe.concurrent('request timeouts', () => {
  it('closes a connection whose headers trickle in at a byte a second after 10 s, with a 408', async () => {
    const connection = await open('GET /healthz HTTP/1.1\r\nHost: x\r\nX-a: ');
    trickle(connection, 'a');
    const { afterMs } = await connection.closed;
    expect(afterMs).toBeGreaterThanOrEqual(9_900);
    expect(afterMs).toBeLessThan(11_000);
    const res = await connection.response(0);
    expectErrorContract(res, 'request_timeout', 408);
    expect(JSON.parse(res.body)).toMatchObject({ message: expect.stringContaining('10 seconds') });
  }, 20_000);

  it('closes a connection that sends nothing after 10 s', async () => {
    const connection = await open();
    const { afterMs } = await connection.closed;
    expect(afterMs).toBeGreaterThanOrEqual(9_900);
    expect(afterMs).toBeLessThan(11_000);
  }, 20_000);

  it('closes a connection whose body trickles in at a byte a second after 30 s, with a 408', async () => {
    const connection = await open(
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n ',
    );
    trickle(connection, ' ');
    const { afterMs } = await connection.closed;
    expect(afterMs).toBeGreaterThanOrEqual(29_900);
    expect(afterMs).toBeLessThan(31_000);
    const res = await connection.response(0);
    expectErrorContract(res, 'request_timeout', 408);
    expect(JSON.parse(res.body)).toMatchObject({ message: expect.stringContaining('30 seconds') });
  }, 40_000);
});
