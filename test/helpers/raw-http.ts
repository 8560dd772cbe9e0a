import { type Agent, type IncomingHttpHeaders, request } from 'node:http';
import { connect, type Socket } from 'node:net';

/** One HTTP/1.1 response read off a raw socket. */
export interface RawResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
}

export interface RawConnection {
  socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Milliseconds from connecting until the server ended or reset the connection. */
  closed: Promise<{ afterMs: number; error?: string }>;
  /** Resolves once the server sent at least one whole response. */
  response(timeoutMs?: number): Promise<RawResponse>;
}

/** The port of a base URL like http://127.0.0.1:41234. */
export function portOf(url: string): number {
  return Number(new URL(url).port);
}

/**
 * Opens a TCP connection to the server, optionally from another loopback address (127.0.0.2, ...,
 * all routed to 127.0.0.1 on Linux), and writes `payload` once connected. With allowHalfOpen the
 * client can keep sending after the server ended its side. Nothing here retries.
 */
export async function rawConnect(
  url: string,
  payload = '',
  options: { localAddress?: string; allowHalfOpen?: boolean } = {},
): Promise<RawConnection> {
  const socket = connect({ port: portOf(url), host: '127.0.0.1', ...options });
  const started = Date.now();
  let data = '';
  let ended: { afterMs: number; error?: string } | undefined;
  const closed = new Promise<{ afterMs: number; error?: string }>((resolve) => {
    const finish = (error?: string) => {
      ended ??= { afterMs: Date.now() - started, ...(error ? { error } : {}) };
      resolve(ended);
    };
    socket.on('end', () => finish());
    socket.on('error', (error: NodeJS.ErrnoException) => finish(error.code ?? error.message));
    socket.on('close', () => finish());
  });
  socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  if (payload !== '') socket.write(payload);
  return {
    socket,
    received: () => data,
    closed,
    async response(timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const parsed = parseResponse(data);
        if (parsed) return parsed;
        if (ended || Date.now() > deadline) {
          throw new Error(`no whole response (${ended ? 'closed' : 'timed out'}): ${data}`);
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

/** Sends one request on a fresh connection and reads the answer. */
export async function rawRequest(
  url: string,
  payload: string,
  options: { localAddress?: string } = {},
): Promise<RawResponse & { closed: Promise<{ afterMs: number; error?: string }> }> {
  const connection = await rawConnect(url, payload, options);
  try {
    return { ...(await connection.response()), closed: connection.closed };
  } finally {
    connection.socket.end();
  }
}

/** The first response in `text`, once its headers and Content-Length bytes of body are there. */
export function parseResponse(text: string): RawResponse | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const body = text.slice(end + 4, end + 4 + length);
  if (Buffer.byteLength(body, 'latin1') < length) return undefined;
  return { status, headers, body };
}

/** Whether the server closed the connection within `ms` (true) or still holds it (false). */
export async function closesWithin(connection: RawConnection, ms: number): Promise<boolean> {
  return Promise.race([
    connection.closed.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
  ]);
}

/**
 * Resolves once the server at `url` has read what was sent to it before this call (a request's
 * headers on another connection, say): a request on a fresh connection is answered, or closed by
 * a cap, only after the server has taken in the bytes and connections that arrived before it.
 * Waits for the server, not for a guess at how long a busy machine takes.
 */
export async function serverCaughtUp(url: string, localAddress?: string): Promise<void> {
  const probe = await rawConnect(
    url,
    'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    localAddress === undefined ? {} : { localAddress },
  );
  await Promise.race([probe.response(60_000).catch(() => undefined), probe.closed]);
  probe.socket.destroy();
}

/** A response read whole through node:http: status, headers both ways, the body as text. */
export interface TextResponse {
  status: number;
  /** Lower-case names, as node:http joins repeated ones. */
  headers: IncomingHttpHeaders;
  /** Names and values in the order received. */
  rawHeaders: string[];
  text: string;
}

/**
 * One request through node:http with `agent` (keep-alive), the body as text; fails when no
 * answer came within `timeoutMs`. Tests that send thousands use it rather than fetch, which cost
 * the test's side about twice the CPU a request.
 */
export function requestText(
  url: string,
  options: {
    method: string;
    agent: Agent;
    headers: Record<string, string>;
    body?: string | undefined;
    timeoutMs: number;
  },
): Promise<TextResponse> {
  const { body, timeoutMs } = options;
  const headers =
    body === undefined
      ? options.headers
      : { ...options.headers, 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const sent = request(url, { method: options.method, agent: options.agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          rawHeaders: res.rawHeaders,
          text: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    const timer = setTimeout(
      () => sent.destroy(new Error(`no answer from ${url} in ${timeoutMs} ms`)),
      timeoutMs,
    );
    sent.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    sent.end(body);
  });
}
