import { createServer, type Server, type Socket, connect } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface DroppingProxy {
  url: string;
  /** Connections whose answer was thrown away. */
  dropped: number;
  close(): Promise<void>;
}

/**
 * A TCP proxy on loopback that forwards requests to `target` but, for the first `drop`
 * connections, throws the server's answer away and resets the client's connection: the request
 * was processed, the client never learns how it ended. A real dropped connection, not a mock.
 */
export async function startDroppingProxy(target: string, drop: number): Promise<DroppingProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const state = { dropped: 0 };
  const server: Server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    const dropThis = state.dropped < drop;
    if (dropThis) state.dropped += 1;
    client.pipe(upstream);
    upstream.on('data', (chunk) => {
      if (dropThis) {
        client.resetAndDestroy();
        upstream.destroy();
      } else {
        client.write(chunk);
      }
    });
    upstream.on('end', () => client.end());
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', closeBoth);
    upstream.on('error', closeBoth);
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    get dropped() {
      return state.dropped;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
