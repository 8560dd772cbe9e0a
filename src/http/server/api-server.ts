import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BlockList, isIPv6, type Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyServerFactory } from 'fastify';
import type { ConnectionLimits, Timeouts } from '../../config/config.js';
import { type Clock, MINUTE_MS, systemClock } from '../../domain/clock.js';
import { http } from './node-http.js';
import { addressBucket } from '../../domain/rate-limits/client-address.js';
import { markAnsweredBeforeRoute } from './answered-sockets.js';
import { type HttpError, httpErrors } from '../errors/http-error.js';
import { genRequestId } from '../answers/request-id.js';
import { rawErrorResponse } from '../answers/raw-response.js';
import { answerPairs, JSON_TYPE } from '../answers/response-headers.js';
import { errorBody } from '../errors/error-table.js';

/**
 * How often Node looks for connections past the headers or request timeout. Its default, 30 s, let
 * a trickled header live 10-40 s and a trickled body 30-60 s; every 500 ms a limit holds within half
 * a second, and a shorter limit (as tests set) is checked a tenth as often as it lasts. The check
 * walks only connections with a request in progress.
 */
export function checkEveryMs(timeouts: Pick<Timeouts, 'headersMs'>): number {
  return Math.min(500, Math.max(10, Math.floor(timeouts.headersMs / 10)));
}

/**
 * After a drain, how long a stopping server still accepts and reads before it closes its listener
 * and its idle connections, answering every request that arrives 503 with Retry-After and
 * Connection: close. Without it, a request sent straight to the instance (not through the load
 * balancer that took it out) just before the stop was reset unanswered: its connection idle or
 * still in the listen queue, its bytes unread. A client told to retry after a second finds the
 * listener closed (connection refused: nothing sent, nothing lost).
 */
export const REFUSE_WINDOW_MS = 1_000;

/** After a refusal written straight to the socket, how long the connection still reads (see linger). */
const LINGER_MS = 1_000;

/**
 * Why a connection was closed at once: MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS, more
 * requests read ahead of their answers than MAX_WAITING_PER_CONNECTION, or a new connection from an
 * address that did that within PIPELINE_PENALTY_SECONDS.
 */
export type ConnectionCap = 'total' | 'per_address' | 'pipelined' | 'penalized';

export interface ApiServerOptions {
  readonly limits: ConnectionLimits;
  /** Headers, request and keep-alive timeouts (the shutdown grace is server-main.ts's). */
  readonly timeouts: Timeouts;
  /** Told of every connection closed at once for being over a cap. */
  readonly onRefused: (cap: ConnectionCap, address: string) => void;
  /** Runs as each request arrives, before it is served (Storage.pollCommitReplies). */
  readonly onArrival?: () => void;
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** What the server knows of one open connection. */
interface Connection {
  /** Requests whose headers arrived and whose response is not done: several when pipelined. */
  readonly inFlight: Map<ServerResponse, IncomingMessage>;
  /** The last request whose headers arrived: its body may still be arriving. */
  latest: IncomingMessage | undefined;
  /** Serve nothing more: close once the responses in flight are done (a refusal, or a drain). */
  closing: boolean;
  /** A client error was dealt with: later ones on this connection (a parser stuck in error) are not. */
  refused: boolean;
  /** The server's, for the words of a 408. */
  readonly timeouts: Timeouts;
  /** Pipelined requests read but not yet handed to the app, oldest first (see handOver). */
  readonly waiting: Array<() => boolean>;
  /** Requests handed to the app whose response is not done. */
  handling: number;
  /** Reading was paused here because requests wait (not Node's own pause). */
  paused: boolean;
  /** A pass over `waiting` is scheduled (setImmediate) or waits for the client to read (drain). */
  pumping: 'scheduled' | 'drain' | undefined;
}

const connections = new WeakMap<Socket, Connection>();

/**
 * The HTTP server under Fastify: Node's http.Server with the service's connection caps, timeouts
 * checked often enough to hold, and every refusal made before routing answered with the Error body.
 *
 * Over MAX_CONNECTIONS, Node itself closes a new connection before any byte is read
 * (`maxConnections`, reported as 'drop'). Over MAX_CONNECTIONS_PER_ADDRESS for its address (IPv6 by
 * /64, as the rate limits count), a new connection is destroyed as soon as it is accepted. Either
 * way the refusal costs nothing and is immediate, so a few addresses holding half-open connections
 * cannot take every slot and lock others out until the headers timeout sweeps them.
 */
export class ApiServer extends http.Server {
  readonly #limits: ConnectionLimits;
  readonly #timeouts: Timeouts;
  readonly #onRefused: ApiServerOptions['onRefused'];
  readonly #onArrival: (() => void) | undefined;
  /** Open connections by address bucket. */
  readonly #perAddress = new Map<string, number>();
  /** Address buckets that pipelined past the bound, and until when (performance.now()) they wait. */
  readonly #penalized = new Map<string, number>();
  /** The trusted proxies' addresses (ConnectionLimits.proxies), which the per-address cap skips. */
  readonly #proxies: BlockList | undefined;
  readonly #open = new Set<Socket>();
  #draining = false;
  /** close() after a drain: requests are answered 503 until the window ends (REFUSE_WINDOW_MS). */
  #refusing = false;

  constructor(handler: Handler, options: ApiServerOptions) {
    super({
      headersTimeout: options.timeouts.headersMs,
      requestTimeout: options.timeouts.requestMs,
      connectionsCheckingInterval: checkEveryMs(options.timeouts),
      // Node's own refusal of a missing Host is a bare 400; the app answers it with the Error body.
      requireHostHeader: false,
    });
    this.keepAliveTimeout = options.timeouts.keepAliveMs;
    // A client may close its sending side once its request is out (`printf ... | nc`) and still
    // read the answer: the request is served, not aborted when its FIN arrives first.
    (this as unknown as { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
    this.#limits = options.limits;
    this.#timeouts = options.timeouts;
    this.#onRefused = options.onRefused;
    this.#onArrival = options.onArrival;
    this.#proxies = proxyList(options.limits.proxies);
    this.maxConnections = options.limits.total;
    this.on('drop', (data?: { remoteAddress?: string }) =>
      this.#onRefused('total', data?.remoteAddress ?? 'unknown'),
    );
    this.on('connection', (socket: Socket) => this.#admit(socket));
    this.on('request', (request: IncomingMessage, response: ServerResponse) =>
      this.#serve(request, response, handler),
    );
    // An Expect other than 100-continue: Node would answer a bare 417. RFC 9110 lets a server
    // ignore an expectation it does not know, so the request is served like any other.
    this.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) =>
      this.#serve(request, response, handler),
    );
    // CONNECT asks for a tunnel, which an origin server does not open. Without a listener Node
    // drops the connection unanswered; its target names a host, not one of our paths, so it is
    // refused like other HTTP we do not serve: 400 with the Error body, then closed.
    this.on('connect', (request: IncomingMessage, socket: Socket) => {
      socket.write(rawErrorResponse(httpErrors.tunnelRefused(), genRequestId(request)));
      linger(socket);
    });
  }

  #admit(socket: Socket): void {
    // http.Server's own 'connection' listener ran first; destroying here also frees its parser.
    if (socket.remoteAddress === undefined) {
      socket.destroy(); // already gone
      return;
    }
    const bucket = addressBucket(socket.remoteAddress);
    if (this.#penalized.size > 0 && this.#isPenalized(bucket)) {
      // Closed before a byte is read: none of its requests is parsed, which is the point.
      socket.destroy();
      this.#onRefused('penalized', bucket);
      return;
    }
    const open = this.#perAddress.get(bucket) ?? 0;
    if (open >= this.#limits.perAddress && !isProxy(this.#proxies, socket.remoteAddress)) {
      socket.destroy();
      this.#onRefused('per_address', bucket);
      return;
    }
    this.#perAddress.set(bucket, open + 1);
    connections.set(socket, {
      inFlight: new Map(),
      latest: undefined,
      closing: false,
      refused: false,
      timeouts: this.#timeouts,
      waiting: [],
      handling: 0,
      paused: false,
      pumping: undefined,
    });
    this.#open.add(socket);
    socket.once('close', () => {
      this.#open.delete(socket);
      const left = (this.#perAddress.get(bucket) ?? 1) - 1;
      if (left > 0) this.#perAddress.set(bucket, left);
      else this.#perAddress.delete(bucket);
    });
  }

  #isPenalized(bucket: string): boolean {
    const until = this.#penalized.get(bucket);
    if (until === undefined) return false;
    if (performance.now() < until) return true;
    this.#penalized.delete(bucket);
    return false;
  }

  #penalize(bucket: string): void {
    const penaltyMs = this.#limits.pipelinePenaltyMs;
    if (penaltyMs <= 0) return;
    const now = performance.now();
    // Addresses whose penalty ended and that never came back are forgotten now and then.
    if (this.#penalized.size >= MAX_PENALIZED) {
      for (const [other, until] of this.#penalized) if (until <= now) this.#penalized.delete(other);
    }
    if (this.#penalized.size < MAX_PENALIZED) this.#penalized.set(bucket, now + penaltyMs);
  }

  /** Whether drain() was called: /readyz answers 503 (src/http/apps/ops/health.route.ts). */
  get draining(): boolean {
    return this.#draining;
  }

  /**
   * The drain before a stop (server-main.ts, on SIGTERM): everything is still served, but each response
   * carries Connection: close, so a client's next request opens a new connection, which its load
   * balancer sends to another instance once /readyz has failed here. Idle connections are left
   * open: closing one under a proxy about to reuse it would lose that request; close() ends them.
   */
  drain(): void {
    this.#draining = true;
  }

  /**
   * Stops accepting and drains (Fastify's close and SIGTERM come here): a connection with no request
   * in flight, idle or still sending headers, is closed at once; one whose request is in flight is
   * answered with Connection: close and closed after it, taking no request pipelined behind it
   * (RFC 9112 9.6: the client retries those elsewhere). The callback runs once all are closed.
   */
  override close(callback?: (error?: Error) => void): this {
    if (this.#draining && !this.#refusing && this.listening) {
      this.#refusing = true;
      this.#markInFlightLast();
      const timer = setTimeout(() => this.#closeNow(callback), REFUSE_WINDOW_MS);
      timer.unref();
      return this;
    }
    if (this.#refusing) return this; // a second close() during the window: the first one ends it
    return this.#closeNow(callback);
  }

  /**
   * Node's close() and Fastify's close both call this first, Fastify before it calls close(): after
   * a drain, idle connections stay open for the refusal window, and #closeNow ends them. Node 26
   * counts a connection accepted but not yet read as idle, so closing here reset a request sent
   * just then, unread.
   */
  override closeIdleConnections(): void {
    if (this.#draining && this.listening) return;
    super.closeIdleConnections();
  }

  /** Each response in flight ends with Connection: close; nothing more is served on its connection. */
  #markInFlightLast(): void {
    for (const socket of this.#open) {
      const connection = connections.get(socket);
      if (connection === undefined || connection.inFlight.size === 0) continue;
      connection.closing = true;
      for (const response of connection.inFlight.keys()) {
        if (!response.headersSent) response.setHeader('connection', 'close');
      }
    }
  }

  #closeNow(callback?: (error?: Error) => void): this {
    this.#refusing = false;
    for (const socket of this.#open) {
      const connection = connections.get(socket);
      if (connection === undefined || connection.inFlight.size === 0) {
        socket.destroy();
        continue;
      }
      connection.closing = true;
      for (const response of connection.inFlight.keys()) {
        if (!response.headersSent) response.setHeader('connection', 'close');
      }
    }
    return super.close(callback);
  }

  #serve(request: IncomingMessage, response: ServerResponse, handler: Handler): void {
    this.#onArrival?.();
    const socket = request.socket;
    const connection = connections.get(socket);
    if (connection === undefined) return handler(request, response);
    // The rest of a read that overflowed (below): parsed by Node, served by nobody.
    if (socket.destroyed) return;
    if (connection.waiting.length >= MAX_WAITING_PER_CONNECTION) {
      closeOverflowing(socket);
      const address = socket.remoteAddress ?? 'unknown';
      const bucket = addressBucket(address);
      // A trusted proxy speaks for many clients: one of them must not lock out the rest.
      if (!isProxy(this.#proxies, address)) this.#penalize(bucket);
      this.#onRefused('pipelined', bucket);
      return;
    }
    if (connection.closing) {
      // Refused or draining: this request is not served. Responses still in flight end with
      // Connection: close, and Node drops the ones queued behind them.
      if (connection.inFlight.size === 0) socket.destroy();
      return;
    }
    if (this.#refusing) {
      refuseStopping(request, response);
      return;
    }
    if (this.#draining) response.setHeader('connection', 'close');
    connection.inFlight.set(response, request);
    connection.latest = request;
    let handed = false;
    // `on`, not `once`: a response closes once, and `once` would wrap the listener and remove it
    // again on every request.
    response.on('close', () => {
      connection.inFlight.delete(response);
      if (handed) handedBack(socket, connection);
      if (connection.closing && connection.inFlight.size === 0) closeAfterWrites(socket);
    });
    handOver(socket, connection, () => {
      // Its connection went while it waited: nothing to answer.
      if (response.destroyed || socket.destroyed) return false;
      handed = true;
      handler(request, response);
      return true;
    });
  }
}

/**
 * Requests of one connection the app works on at once. A client may pipeline thousands: the ones
 * behind wait, read but not handled, and the connection is paused meanwhile. Node resumes it
 * whenever one of its responses finishes, so a flood is read on; MAX_WAITING_PER_CONNECTION
 * bounds what that reading can queue.
 */
const MAX_HANDLED_PER_CONNECTION = 8;

/**
 * Requests of one connection read but not yet handed to the app. One read of a socket brings up
 * to 64 KiB, some 1,800 minimal GETs, all parsed by Node before anything can stop it; a client
 * that pipelines past this bound has its connection closed at once, dropping what it read ahead
 * (RFC 9112 9.3.2: a client retries the requests a closed connection left unanswered). Each waiting
 * request holds its request and response objects, so this bounds what a connection keeps.
 */
export const MAX_WAITING_PER_CONNECTION = 128;

/** Addresses remembered at once for PIPELINE_PENALTY_SECONDS: a bound on what an attack can make it keep. */
const MAX_PENALIZED = 10_000;

/**
 * Waiting requests of one connection handed over per turn of the event loop. One: with hundreds of
 * flooding connections a turn then handles one request each, and a request on another connection
 * waits a turn or two, milliseconds, not the whole flood.
 */
const HANDED_PER_TURN = 1;

/**
 * Hands a request of a connection to the app now, or queues it behind the ones being handled and
 * stops reading the connection. Queued requests are handed over a few per turn of the event loop
 * (setImmediate), so that other connections are read and served between them, and not at all
 * while the client leaves its answers unread (the socket's buffer is over its high-water mark).
 */
function handOver(socket: Socket, connection: Connection, start: () => boolean): void {
  // A request with none before it on its connection (every client that does not pipeline) is
  // handled at once; the pipelined ones behind it wait their turn.
  if (connection.handling === 0 && connection.waiting.length === 0 && !answersUnread(socket)) {
    connection.handling += 1;
    if (!start()) connection.handling -= 1;
    return;
  }
  connection.waiting.push(start);
  if (!connection.paused) {
    connection.paused = true;
    socket.pause();
  }
  schedulePump(socket, connection);
}

/** A response of the connection is done: one more of its waiting requests may be handled. */
function handedBack(socket: Socket, connection: Connection): void {
  connection.handling -= 1;
  if (connection.waiting.length > 0) schedulePump(socket, connection);
}

/** The client has not read what was already written to it (RFC 9112 9.3.2: no more is read). */
function answersUnread(socket: Socket): boolean {
  return socket.writableNeedDrain;
}

function schedulePump(socket: Socket, connection: Connection): void {
  if (connection.pumping !== undefined || socket.destroyed) return;
  if (answersUnread(socket)) {
    connection.pumping = 'drain';
    // The client reads no more: once the request timeout passes without it reading, it goes.
    const timer = setTimeout(() => socket.destroy(), connection.timeouts.requestMs);
    timer.unref();
    socket.once('drain', () => {
      clearTimeout(timer);
      connection.pumping = undefined;
      schedulePump(socket, connection);
    });
    socket.once('close', () => clearTimeout(timer));
    return;
  }
  connection.pumping = 'scheduled';
  setImmediate(() => {
    connection.pumping = undefined;
    pump(socket, connection);
  });
}

/** Hands waiting requests over up to the per-connection bound; reads on once none waits. */
function pump(socket: Socket, connection: Connection): void {
  if (socket.destroyed) {
    connection.waiting.length = 0;
    return;
  }
  for (
    let handed = 0;
    handed < HANDED_PER_TURN &&
    connection.waiting.length > 0 &&
    connection.handling < MAX_HANDLED_PER_CONNECTION &&
    !answersUnread(socket);
    handed++
  ) {
    const start = connection.waiting.shift() as () => boolean;
    connection.handling += 1;
    if (!start()) connection.handling -= 1;
  }
  if (connection.waiting.length > 0) {
    // More wait: another turn when one of the handled ones is done (handedBack), else now.
    if (connection.handling < MAX_HANDLED_PER_CONNECTION) schedulePump(socket, connection);
    return;
  }
  if (connection.paused) {
    connection.paused = false;
    socket.resume();
  }
}

/** A request arriving while the server stops (REFUSE_WINDOW_MS): 503, Retry-After, then closed. */
function refuseStopping(request: IncomingMessage, response: ServerResponse): void {
  const refusal = httpErrors.stopping(Math.ceil(REFUSE_WINDOW_MS / 1000));
  const body = JSON.stringify(errorBody(refusal));
  response.writeHead(errorBody(refusal).status, [
    ...answerPairs(genRequestId(request)),
    'content-type',
    JSON_TYPE,
    'content-length',
    String(Buffer.byteLength(body)),
    ...Object.entries(refusal.headers).flat(),
    'connection',
    'close',
  ]);
  response.end(body);
}

/** Fastify's serverFactory option: the app is served by an ApiServer. */
export function apiServerFactory(options: ApiServerOptions): FastifyServerFactory {
  return (handler) => new ApiServer(handler, options);
}

/** What Node reports on 'clientError': a parse error (HPE_*), a timeout, a reset. */
export interface ClientError extends Error {
  code?: string;
  /** The HTTP parser's description of a parse error. */
  reason?: string;
}

/**
 * Fastify's clientErrorHandler option: answers what Node refuses before any route sees it (bad
 * framing, headers over Node's maxHeaderSize, the headers or request timeout) with the Error body, or closes the
 * connection when no answer can be written in its place.
 */
export function answerClientError(
  error: ClientError,
  socket: Socket,
  log: FastifyBaseLogger,
  rateLimitLines?: RateLimitLines,
): void {
  const connection = connections.get(socket);
  if (error.code === 'ECONNRESET' || socket.destroyed || connection?.refused) return;
  const inFlight = connection ? [...connection.inFlight] : [];
  if (!socket.writable || inFlight.some(([response]) => response.headersSent)) {
    socket.destroy(); // an answer is under way: nothing else can be written in its place
    return;
  }
  if (connection) {
    connection.refused = true;
    connection.closing = true;
  }
  const latest = connection?.latest;
  const receiving = latest !== undefined && !latest.complete ? latest : undefined;
  const [first] = inFlight;
  if (receiving !== undefined && !inFlight.some(([, request]) => request === receiving)) {
    // Already answered (e.g. a 401 before its body arrived): no second answer, just close.
    linger(socket);
    return;
  }
  if (first !== undefined && first[1] !== receiving) {
    // The error is in a request pipelined behind ones not yet answered: every one of those was
    // read and will run, so each is answered, in order, and the last closes the connection. A
    // Connection: close on an earlier one would make Node drop the answers queued behind it.
    const [lastResponse] = inFlight[inFlight.length - 1] as [ServerResponse, IncomingMessage];
    if (!lastResponse.headersSent) lastResponse.setHeader('connection', 'close');
    return;
  }
  // The headers never completed, or the request whose body is arriving is the one to answer.
  markAnsweredBeforeRoute(socket);
  const refusal = refusalFor(error, receiving !== undefined, connection?.timeouts);
  const requestId = receiving ? genRequestId(receiving) : randomUUID();
  log.info({ requestId, code: refusal.code, cause: error.code }, refusal.message);
  const answer = (headerLines: string) => {
    if (socket.destroyed) return;
    socket.write(rawErrorResponse(refusal, requestId, headerLines));
    // A body still arriving is read and dropped while the connection lingers: its handler never
    // runs, as the body parser hands over no body of a connection marked above.
    linger(socket);
  };
  withRateLimitLines(socket, rateLimitLines, answer);
}

/**
 * The rate-limit header lines of a refusal written before routing: the address budget of the
 * connection's own address, as it stands (the refusal does not draw on it: the connection is
 * closed, which costs the client a new one). Without them when the counters cannot be read.
 */
export type RateLimitLines = (address: string) => Promise<string>;

function withRateLimitLines(
  socket: Socket,
  rateLimitLines: RateLimitLines | undefined,
  answer: (headerLines: string) => void,
): void {
  const address = socket.remoteAddress;
  if (rateLimitLines === undefined || address === undefined) {
    answer('');
    return;
  }
  // Until the answer is written, nothing more is read: a client that half-closed after its bytes
  // would otherwise have its connection ended by Node (on 'end') before a shared store answers.
  socket.pause();
  const resumeThen = (headerLines: string) => {
    socket.resume();
    answer(headerLines);
  };
  rateLimitLines(address).then(resumeThen, () => resumeThen(''));
}

/**
 * Closes a connection that pipelined past MAX_WAITING_PER_CONNECTION. On close Node aborts every
 * request of it not yet answered, the rest of the read included (some 1,800), each with an error
 * whose stack trace it captures, a large share of the CPU under a flood of such connections.
 * Nobody reads those errors, so they are made without a trace: the limit is 0 from just before Node's close listener
 * (registered when the connection came) to just after it.
 */
function closeOverflowing(socket: Socket): void {
  let limit = Error.stackTraceLimit;
  socket.prependOnceListener('close', () => {
    limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
  });
  socket.once('close', () => {
    Error.stackTraceLimit = limit;
  });
  socket.destroy();
}

function proxyList(entries: readonly string[]): BlockList | undefined {
  if (entries.length === 0) return undefined;
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const family = isIPv6(address) ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return list;
}

/** Whether a connection comes from a trusted proxy; an IPv4-mapped IPv6 address counts as IPv4. */
function isProxy(proxies: BlockList | undefined, address: string): boolean {
  if (proxies === undefined) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined) return proxies.check(mapped, 'ipv4');
  return proxies.check(address, isIPv6(address) ? 'ipv6' : 'ipv4');
}

/**
 * Ends the connection but reads (and drops) what the client still sends for LINGER_MS before
 * destroying it: closing with unread data makes TCP send a reset, and the client could lose the
 * answer. Nothing more is served on it (`closing`).
 */
function linger(socket: Socket): void {
  socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

function refusalFor(
  error: ClientError,
  headersReceived: boolean,
  timeouts: Timeouts | undefined,
): HttpError {
  // Only an admitted connection, which knows its server's timeouts, lives long enough to time out.
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && timeouts !== undefined) {
    return headersReceived
      ? httpErrors.requestTimeout('request', timeouts.requestMs)
      : httpErrors.requestTimeout('headers', timeouts.headersMs);
  }
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return httpErrors.headersTooLarge(Math.floor(http.maxHeaderSize / 1024));
    default: {
      // llhttp's fixed descriptions ("Invalid header value char"); anything else is not shown.
      const reason = /^[\x20-\x7e]{1,100}$/.test(error.reason ?? '') ? error.reason : undefined;
      return httpErrors.badFraming(reason ?? 'the request could not be parsed');
    }
  }
}

/** Ends the connection once what was written is sent, as Node does after `Connection: close`. */
function closeAfterWrites(socket: Socket): void {
  if (socket.destroyed || socket.writableEnded) return;
  socket.end();
  socket.once('finish', () => socket.destroy());
}

/**
 * Warns of refused connections at most once a minute per cap, with how many were refused since the
 * last warning: a flood of connections must not become a flood of log lines (the metric counts all).
 */
const REFUSAL_WORDS: Record<ConnectionCap, string> = {
  total: 'connections refused: MAX_CONNECTIONS reached',
  per_address: 'connections refused: MAX_CONNECTIONS_PER_ADDRESS reached for an address',
  pipelined: `connections closed: more than ${MAX_WAITING_PER_CONNECTION} requests pipelined ahead of their answers`,
  penalized:
    'connections refused: the address pipelined too far ahead within PIPELINE_PENALTY_SECONDS',
};

export function refusalWarnings(
  clock: Clock = systemClock,
  everyMs = MINUTE_MS,
): (log: FastifyBaseLogger, cap: ConnectionCap, address: string) => void {
  const pending = new Map<ConnectionCap, { lastAt: number; count: number }>();
  return (log, cap, address) => {
    const now = clock.now();
    const state = pending.get(cap) ?? { lastAt: -Infinity, count: 0 };
    state.count += 1;
    pending.set(cap, state);
    if (now - state.lastAt < everyMs) return;
    log.warn({ cap, address, refused: state.count }, REFUSAL_WORDS[cap]);
    state.lastAt = now;
    state.count = 0;
  };
}
