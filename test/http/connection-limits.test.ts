import { afterEach, describe, expect, it } from 'vitest';
import { closesWithin, rawConnect, type RawConnection, rawRequest } from '../helpers/raw-http.js';
import { call, useServer } from '../helpers/test-server.js';

// One backend only: connection caps are counted in the process, before any request is read,
// and /healthz and /metrics read neither the database nor Redis.

// Small caps so the test opens a few dozen connections, not thousands. Each 127.0.0.x is a client
// address of its own: Linux routes the whole 127/8 to the loopback interface.
const PER_ADDRESS = 5;
const TOTAL = 12;
const server = useServer({
  env: { MAX_CONNECTIONS: String(TOTAL), MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS) },
});

/** Request headers that never finish: a connection the server must hold until its timeout. */
const HALF_SENT = 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-a: ';
const HEALTHZ = 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';

const opened: RawConnection[] = [];
afterEach(() => {
  for (const connection of opened.splice(0)) connection.socket.destroy();
});

async function halfOpen(localAddress: string, count: number): Promise<RawConnection[]> {
  const connections: RawConnection[] = [];
  for (let i = 0; i < count; i++) {
    connections.push(await rawConnect(server().url, HALF_SENT, { localAddress }));
  }
  opened.push(...connections);
  // Closes of an earlier test's connections are seen by the server a moment after the client
  // sent them; until then they still count towards the total.
  await new Promise((r) => setTimeout(r, 100));
  return connections;
}

/**
 * Resolves once the server has taken in (counted, or refused) every connection opened before:
 * it accepts connections in the order their handshakes completed, so a later one, from an address
 * of its own, that is answered or closed proves it. The client sees a handshake complete before
 * the server has accepted it; this waits for the server, however busy the machine.
 */
async function caughtUp(url = server().url): Promise<void> {
  const probe = await rawConnect(url, HEALTHZ, { localAddress: '127.0.0.250' });
  await Promise.race([probe.response(60_000).catch(() => undefined), probe.closed]);
  probe.socket.destroy();
}

/** Retries `request` until it is answered (a connection refused by a cap closes unanswered). */
async function answered<T>(request: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await request();
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
  }
}

describe('connection caps', () => {
  it('closes at once a connection over the per-address cap, and still serves other addresses', async () => {
    const held = await halfOpen('127.0.0.2', PER_ADDRESS);
    const [extra] = await halfOpen('127.0.0.2', 1);
    if (!extra) throw new Error('not opened');
    await caughtUp();

    // Closed before the server took the next connection in, not at a timeout.
    expect(await closesWithin(extra, 5_000)).toBe(true);
    expect(extra.received()).toBe('');
    for (const connection of held) expect(await closesWithin(connection, 0)).toBe(false);

    const other = await rawRequest(server().url, HEALTHZ, { localAddress: '127.0.0.3' });
    expect(other.status).toBe(200);
  });

  it('admits the address again once one of its connections closes', async () => {
    const [first] = await halfOpen('127.0.0.4', PER_ADDRESS);
    first?.socket.destroy();
    await first?.closed;
    // Refused only until the server has seen the close.
    const again = await answered(() =>
      rawRequest(server().url, HEALTHZ, { localAddress: '127.0.0.4' }),
    );
    expect(again.status).toBe(200);
  });

  it('closes at once a connection over the total cap, whatever its address', async () => {
    // 127.0.0.5 to .7 hold 12 connections between them: the cap. The next, from .8, is refused.
    await halfOpen('127.0.0.5', 4);
    await halfOpen('127.0.0.6', 4);
    await halfOpen('127.0.0.7', TOTAL - 8);
    const [extra] = await halfOpen('127.0.0.8', 1);
    if (!extra) throw new Error('not opened');
    await caughtUp();
    expect(await closesWithin(extra, 5_000)).toBe(true);
    expect(extra.received()).toBe('');
  });

  it('counts refused connections in metrics, by cap', async () => {
    await halfOpen('127.0.0.9', PER_ADDRESS + 1); // the last one over the per-address cap
    await halfOpen('127.0.0.10', PER_ADDRESS);
    await halfOpen('127.0.0.11', TOTAL - 2 * PER_ADDRESS);
    await halfOpen('127.0.0.12', 1); // over the total cap
    await caughtUp();
    for (const connection of opened) connection.socket.destroy();
    // Refused (by the total cap) only until the server has seen those connections close.
    const res = await answered(() => call(server(), 'GET', '/metrics'));
    expect(res.text).toMatch(/petstore_connections_refused_total\{cap="per_address"\} [1-9]/);
    expect(res.text).toMatch(/petstore_connections_refused_total\{cap="total"\} [1-9]/);
  });
});

describe('a trusted proxy', () => {
  // HAProxy's connections all come from its one address: listed in TRUST_PROXY, that address is
  // not held to the per-address cap (a burst through it, health checks included, is not refused).
  const behindProxy = useServer({
    env: {
      MAX_CONNECTIONS: String(TOTAL),
      MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
      TRUST_PROXY: '127.0.0.20, 10.0.0.0/8',
    },
  });

  async function halfOpenTo(url: string, localAddress: string, count: number) {
    const connections: RawConnection[] = [];
    for (let i = 0; i < count; i++) {
      connections.push(await rawConnect(url, HALF_SENT, { localAddress }));
    }
    opened.push(...connections);
    return connections;
  }

  it('is not held to the per-address cap, while other addresses still are', async () => {
    const url = behindProxy().url;
    const held = await halfOpenTo(url, '127.0.0.20', PER_ADDRESS + 3);
    await caughtUp(url);
    for (const connection of held) expect(await closesWithin(connection, 0)).toBe(false);
    const check = await rawRequest(url, HEALTHZ, { localAddress: '127.0.0.20' });
    expect(check.status).toBe(200);

    await halfOpenTo(url, '127.0.0.21', PER_ADDRESS);
    const [extra] = await halfOpenTo(url, '127.0.0.21', 1);
    if (!extra) throw new Error('not opened');
    await caughtUp(url);
    expect(await closesWithin(extra, 5_000)).toBe(true);
  });
});

describe('the default caps', () => {
  const defaults = useServer();

  it('serve a benchmark of 100 keep-alive connections from one address', async () => {
    const connections = await Promise.all(
      Array.from({ length: 100 }, () =>
        rawConnect(defaults().url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'),
      ),
    );
    opened.push(...connections);
    const answers = await Promise.all(connections.map((c) => c.response()));
    expect(answers.map((a) => a.status)).toEqual(Array<number>(100).fill(200));
    for (const connection of connections) expect(await closesWithin(connection, 0)).toBe(false);
  });
});
