import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type JsonLines, jsonLinesOf, loggableUrl } from '../../telemetry/logging/logger.js';
import { routeInfo } from '../route-info.js';

export interface AccessLogOptions {
  /** LOG_SAMPLE_SUCCESS: the share of 2xx/3xx lines written; 4xx and 5xx are always written. */
  readonly sampleSuccess: number;
  /** Draws the sample; Math.random unless a test fixes it. */
  readonly random?: () => number;
  /**
   * Where the request's logger writes, when its lines are plain JSON with no binding but the
   * request id: the line is then formatted here, as pino would, without a child logger per request
   * (a sixth of a listPets answer's CPU went to pino). Absent: the request's logger writes it.
   */
  readonly lines?: JsonLines;
}

const QUIET = new Set(['fatal', 'error', 'warn', 'silent']);
/** Levels at which a request also logs its arrival (the plugin's onRequest hook). */
export const ARRIVAL_LEVELS: ReadonlySet<string> = new Set(['debug', 'trace']);
const MESSAGE = 'request completed';
const INFO = 30;

export interface AccessEntry {
  method: string;
  route?: string | undefined;
  url?: string | undefined;
  status: number;
  durationMs: number;
  keyId?: string | undefined;
}

function entryOf(request: FastifyRequest, status: number, elapsedMs: number): AccessEntry {
  const route = routeInfo(request).template;
  // Absent fields stay undefined, which pino leaves out as accessLine does.
  return {
    method: request.method,
    route,
    url: route === undefined ? loggableUrl(request.url) : undefined,
    status,
    durationMs: Math.round(elapsedMs * 10) / 10,
    keyId: request.apiKey?.id,
  };
}

const text = JSON.stringify;

/**
 * The line pino writes for `request.log.info(entry, MESSAGE)`, field for field: level, time, the
 * logger's base bindings, the request id, the entry's fields in order, the message
 * (test/http/access-line.test.ts holds the two side by side). The request id (a token or a UUID:
 * request-id.plugin.ts), the method (an HTTP token) and the route template (our own paths) have no
 * character JSON escapes, so they go in as they are; the URL and the key id are escaped.
 */
export function accessLine(lines: JsonLines, requestId: string, entry: AccessEntry): string {
  const { method, route, url, status, durationMs, keyId } = entry;
  return (
    `{"level":${INFO},"time":${Date.now()}${lines.base},"requestId":"${requestId}"` +
    `,"method":"${method}"` +
    (route === undefined ? '' : `,"route":"${route}"`) +
    (url === undefined ? '' : `,"url":${text(url)}`) +
    `,"status":${status},"durationMs":${durationMs}` +
    (keyId === undefined ? '' : `,"keyId":${text(keyId)}`) +
    `,"msg":"${MESSAGE}"}\n`
  );
}

export interface AccessLog {
  /**
   * Writes the line of an answered request, or leaves it out (LOG_SAMPLE_SUCCESS). `log` is the
   * request's logger, which writes the line when it cannot be formatted here.
   */
  write(requestId: string, entry: AccessEntry, log?: FastifyBaseLogger): void;
  /** Lines are formatted here: a request needs no logger of its own for its line. */
  readonly formatted: boolean;
}

/**
 * The access log of a listener logging to `logger` (none without one). With traces, a request's
 * lines carry its trace id, so its own logger writes them.
 */
export function accessLogFor(options: {
  logger: FastifyBaseLogger | undefined;
  tracing: boolean;
  sampleSuccess: number;
}): AccessLog | undefined {
  const { logger, tracing, sampleSuccess } = options;
  if (logger === undefined) return undefined;
  const lines = tracing ? undefined : jsonLinesOf(logger);
  return createAccessLog({ level: logger.level, sampleSuccess, ...(lines ? { lines } : {}) });
}

/** The access log at `level`; undefined when the level prints no such line. */
export function createAccessLog(
  options: AccessLogOptions & { level: string },
): AccessLog | undefined {
  if (QUIET.has(options.level)) return undefined;
  const { sampleSuccess, lines } = options;
  const random = options.random ?? Math.random;
  return {
    formatted: lines !== undefined,
    write(requestId, entry, log) {
      if (entry.status < 400 && sampleSuccess < 1 && random() >= sampleSuccess) return;
      if (lines !== undefined) lines.write(accessLine(lines, requestId, entry));
      else log?.info(entry, MESSAGE);
    },
  };
}

/**
 * One line per request at info, once answered: method, route template, status, duration and the
 * key's id, with the request id and trace id the request's logger carries. Never the URL of a
 * matched route (its template says what it is); for an unmatched one, the URL as loggableUrl
 * keeps it, without query values other than the interface's. At debug, a line on arrival too.
 * Registered only when the logger would print the lines.
 */
export const accessLogPlugin = fp<{ access: AccessLog | undefined }>(
  async (app, { access }) => {
    if (ARRIVAL_LEVELS.has(app.log.level)) {
      app.addHook('onRequest', (request, _reply, done) => {
        request.log.debug({ req: request }, 'incoming request');
        done();
      });
    }
    if (access === undefined) return;
    app.addHook('onResponse', (request, reply, done) => {
      access.write(request.id, entryOf(request, reply.statusCode, reply.elapsedTime), request.log);
      done();
    });
  },
  { name: 'access-log' },
);
