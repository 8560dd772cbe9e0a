import { describe, expect, it } from 'vitest';
import { MAX_WAITING_PER_CONNECTION } from '../../src/http/server/api-server.js';
import { closesWithin, rawConnect } from '../helpers/raw-http.js';
import { call, startServer, useServer } from '../helpers/test-server.js';

const server = useServer();

const GET_PETS = 'GET /v1/pets?limit=1 HTTP/1.1\r\nHost: x\r\n\r\n';

function answersIn(text: string): number {
  return text.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0;
}

/**
 * How far a client may pipeline (issue 19 item 5). The flood itself, from real processes, with
 * memory and other clients measured, is test/process/bad-days.pipelined-flood.test.ts.
 */
describe('pipelined requests on one connection', () => {
  it(`answers all of ${MAX_WAITING_PER_CONNECTION} pipelined at once and keeps the connection`, async () => {
    const s = server();
    const connection = await rawConnect(s.url, GET_PETS.repeat(MAX_WAITING_PER_CONNECTION), {
      localAddress: '127.0.0.4',
    });
    const deadline = Date.now() + 20_000;
    while (answersIn(connection.received()) < MAX_WAITING_PER_CONNECTION && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(answersIn(connection.received())).toBe(MAX_WAITING_PER_CONNECTION);
    expect(await closesWithin(connection, 200)).toBe(false);
    connection.socket.destroy();
  });

  it('closes a connection pipelined further ahead than that, answering part, and serves others', async () => {
    const s = server();
    const { key } = await s.createKey();
    const connection = await rawConnect(s.url, GET_PETS.repeat(4 * MAX_WAITING_PER_CONNECTION), {
      localAddress: '127.0.0.3',
    });
    expect(await closesWithin(connection, 10_000)).toBe(true);
    expect(answersIn(connection.received())).toBeLessThan(MAX_WAITING_PER_CONNECTION);
    expect((await call(s, 'GET', '/v1/pets', { key })).status).toBe(200);
    expect((await call(s, 'GET', '/healthz')).status).toBe(200);
    const metrics = (await call(s, 'GET', '/metrics')).text;
    expect(metrics).toMatch(/petstore_connections_refused_total\{cap="pipelined"\} 1\b/);
  });

  it('closes new connections from an address that pipelined too far, on arrival, for PIPELINE_PENALTY_SECONDS', async () => {
    // Issue 34 item 8: a flood that reconnected after each close had every new connection's first
    // read parsed in full, and kept other clients' reads near a second.
    const s = server();
    const flood = await rawConnect(s.url, GET_PETS.repeat(4 * MAX_WAITING_PER_CONNECTION), {
      localAddress: '127.0.0.5',
    });
    expect(await closesWithin(flood, 10_000)).toBe(true);
    const again = await rawConnect(s.url, GET_PETS, { localAddress: '127.0.0.5' });
    expect(await closesWithin(again, 10_000)).toBe(true);
    expect(answersIn(again.received())).toBe(0);
    // Another address is served as ever.
    expect((await call(s, 'GET', '/healthz')).status).toBe(200);
    const metrics = (await call(s, 'GET', '/metrics')).text;
    expect(metrics).toMatch(/petstore_connections_refused_total\{cap="penalized"\} [1-9]/);
  });

  it('serves the address again at once with PIPELINE_PENALTY_SECONDS=0', async () => {
    const s = await startServer({ env: { PIPELINE_PENALTY_SECONDS: '0' } });
    try {
      const flood = await rawConnect(s.url, GET_PETS.repeat(4 * MAX_WAITING_PER_CONNECTION), {
        localAddress: '127.0.0.6',
      });
      expect(await closesWithin(flood, 10_000)).toBe(true);
      const again = await rawConnect(s.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', {
        localAddress: '127.0.0.6',
      });
      expect((await again.response()).status).toBe(200);
      again.socket.destroy();
    } finally {
      await s.close();
    }
  });
});
