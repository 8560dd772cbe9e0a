import { type IncomingMessage, Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyServerFactory } from 'fastify';
import type { ConnectionLimits } from '../config/config.js';
import { addressBucket } from '../domain/rate-limits/client-address.js';

/** Headers within 10 s, the whole request within 30 s; idle keep-alive connections for 72 s. */
export const TIMEOUTS = {
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 72_000,
  /**
   * How often Node looks for connections past the headers or request timeout. Its default, 30 s,
   * let a trickled header live 10-40 s and a trickled body 30-60 s; every 500 ms a limit holds
   * within half a second. The check walks only connections with a request in progress.
   */
  checkEveryMs: 500,
} as const;

export type ConnectionCap = 'total' | 'per_address';

export interface ApiServerOptions {
  readonly limits: ConnectionLimits;
  /** Told of every connection closed at once for being over a cap. */
  readonly onRefused: (cap: ConnectionCap, address: string) => void;
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * The HTTP server under Fastify: Node's http.Server with the service's connection caps.
 *
 * Over MAX_CONNECTIONS, Node itself closes a new connection before any byte is read
 * (`maxConnections`, reported as 'drop'). Over MAX_CONNECTIONS_PER_ADDRESS for its address (IPv6 by
 * /64, as the rate limits count), a new connection is destroyed as soon as it is accepted. Either
 * way the refusal costs nothing and is immediate, so a few addresses holding half-open connections
 * cannot take every slot and lock others out until the headers timeout sweeps them.
 */
export class ApiServer extends Server {
  readonly #limits: ConnectionLimits;
  readonly #onRefused: ApiServerOptions['onRefused'];
  /** Open connections by address bucket. */
  readonly #perAddress = new Map<string, number>();

  constructor(handler: Handler, options: ApiServerOptions) {
    super(
      {
        headersTimeout: TIMEOUTS.headersMs,
        requestTimeout: TIMEOUTS.requestMs,
        connectionsCheckingInterval: TIMEOUTS.checkEveryMs,
      },
      handler,
    );
    this.keepAliveTimeout = TIMEOUTS.keepAliveMs;
    this.#limits = options.limits;
    this.#onRefused = options.onRefused;
    this.maxConnections = options.limits.total;
    this.on('drop', (data?: { remoteAddress?: string }) =>
      this.#onRefused('total', data?.remoteAddress ?? 'unknown'),
    );
    this.on('connection', (socket: Socket) => this.#admit(socket));
  }

  #admit(socket: Socket): void {
    // http.Server's own 'connection' listener ran first; destroying here also frees its parser.
    if (socket.remoteAddress === undefined) {
      socket.destroy(); // already gone
      return;
    }
    const bucket = addressBucket(socket.remoteAddress);
    const open = this.#perAddress.get(bucket) ?? 0;
    if (open >= this.#limits.perAddress) {
      socket.destroy();
      this.#onRefused('per_address', bucket);
      return;
    }
    this.#perAddress.set(bucket, open + 1);
    socket.once('close', () => {
      const left = (this.#perAddress.get(bucket) ?? 1) - 1;
      if (left > 0) this.#perAddress.set(bucket, left);
      else this.#perAddress.delete(bucket);
    });
  }
}

/** Fastify's serverFactory option: the app is served by an ApiServer. */
export function apiServerFactory(options: ApiServerOptions): FastifyServerFactory {
  return (handler) => new ApiServer(handler, options);
}

/**
 * Warns of refused connections at most once a minute per cap, with how many were refused since the
 * last warning: a flood of connections must not become a flood of log lines (the metric counts all).
 */
export function refusalWarnings(
  everyMs = 60_000,
): (log: FastifyBaseLogger, cap: ConnectionCap, address: string) => void {
  const pending = new Map<ConnectionCap, { lastAt: number; count: number }>();
  return (log, cap, address) => {
    const now = Date.now();
    const state = pending.get(cap) ?? { lastAt: -Infinity, count: 0 };
    state.count += 1;
    pending.set(cap, state);
    if (now - state.lastAt < everyMs) return;
    log.warn(
      { cap, address, refused: state.count },
      cap === 'total'
        ? 'connections refused: MAX_CONNECTIONS reached'
        : 'connections refused: MAX_CONNECTIONS_PER_ADDRESS reached for an address',
    );
    state.lastAt = now;
    state.count = 0;
  };
}
