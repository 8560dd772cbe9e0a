import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { portOf } from '../helpers/raw-http.js';
import { call, useServer } from '../helpers/test-server.js';

const server = useServer();

const CONNECTIONS = 50;
const PIPELINED = 500;
const GET_PETS = 'GET /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n';

const flood: Socket[] = [];
afterEach(() => {
  for (const socket of flood.splice(0)) socket.destroy();
});

/**
 * Connections from one address (127.0.0.3) that each pipeline PIPELINED GETs without a key and
 * never read an answer: no 'data' listener, so the client's receive buffer fills and stays full.
 */
async function pipelineWithoutReading(url: string): Promise<void> {
  await Promise.all(
    Array.from(
      { length: CONNECTIONS },
      () =>
        new Promise<void>((resolve, reject) => {
          const socket = connect({
            port: portOf(url),
            host: '127.0.0.1',
            localAddress: '127.0.0.3',
          });
          flood.push(socket);
          socket.on('error', () => undefined);
          socket.once('connect', () => {
            socket.write(GET_PETS.repeat(PIPELINED));
            resolve();
          });
          socket.once('error', reject);
        }),
    ),
  );
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: Math.round(performance.now() - started), value };
}

describe('a pipelined flood from one address that never reads its answers', () => {
  it('leaves another client a valid request and /healthz each answered within 2.5 s', async () => {
    const s = server();
    const { key } = await s.createKey();
    await pipelineWithoutReading(s.url);
    // Node parses what one read of a connection brought (here all 500 requests, 18 KB) in one go,
    // before anything can stop it: that burst, a second or so on a busy machine, is not what is
    // measured. What is: the app's work on the flood no longer stands between other clients and
    // their answers (before, everything read was handled at once: 10 s here, 21-40 s in the issue).
    await new Promise((r) => setTimeout(r, 1_000));
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const pets = await timed(() => call(s, 'GET', '/v1/pets', { key }));
      const health = await timed(() => call(s, 'GET', '/healthz'));
      expect(pets.value.status).toBe(200);
      expect(health.value.status).toBe(200);
      times.push(pets.ms, health.ms);
      await new Promise((r) => setTimeout(r, 200));
    }
    console.log(`[pipelined flood] other client: ${times.join(', ')} ms`);
    // Milliseconds on an idle machine; 2.5 s leaves room for a busy 2-core one.
    expect(Math.max(...times)).toBeLessThan(2_500);
  });
});
