import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on loopback in front of a real server, which a test can take down and bring back
 * without touching the server that other test files share. Real sockets, not mocks.
 */
export interface TcpProxy {
  readonly port: number;
  /** Server down: open connections are reset and new ones refused (ECONNREFUSED). */
  cut(): Promise<void>;
  /** Server back, on the same port. */
  restore(): Promise<void>;
  /** A network that drops everything without a reset: connections stay open, nothing arrives. */
  freeze(): void;
  /** Network back; connections that lost bytes while frozen are reset, as a real one would be. */
  thaw(): void;
  close(): Promise<void>;
}

/** A port on loopback that nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A server that accepts connections and never says a word, like a host behind a stuck proxy. */
export async function startSilentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let frozen = false;

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  };
  const resetAll = () => {
    for (const socket of sockets) socket.resetAndDestroy();
  };

  const onConnection = (client: Socket) => {
    const upstream = connect(target.port, target.host);
    track(client);
    track(upstream);
    client.on('data', (chunk) => {
      if (!frozen) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!frozen) client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  };

  let server: Server = createServer(onConnection);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
    });
  const stop = () => new Promise<void>((resolve) => server.close(() => resolve()));

  const port = await listen(0);
  return {
    port,
    async cut() {
      const closed = stop();
      resetAll();
      await closed;
    },
    async restore() {
      server = createServer(onConnection);
      await listen(port);
    },
    freeze() {
      frozen = true;
    },
    thaw() {
      frozen = false;
      resetAll();
    },
    async close() {
      resetAll();
      if (server.listening) await stop();
    },
  };
}
