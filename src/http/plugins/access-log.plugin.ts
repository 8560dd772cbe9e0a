import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type JsonLines, loggableUrl } from '../log-options.js';
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
const MESSAGE = 'request completed';
const INFO = 30;

interface AccessEntry {
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
 * (test/http/access-line.test.ts holds the two side by side).
 */
export function accessLine(lines: JsonLines, requestId: string, entry: AccessEntry): string {
  const { method, route, url, status, durationMs, keyId } = entry;
  return (
    `{"level":${INFO},"time":${Date.now()}${lines.base},"requestId":${text(requestId)}` +
    `,"method":${text(method)}` +
    (route === undefined ? '' : `,"route":${text(route)}`) +
    (url === undefined ? '' : `,"url":${text(url)}`) +
    `,"status":${status},"durationMs":${durationMs}` +
    (keyId === undefined ? '' : `,"keyId":${text(keyId)}`) +
    `,"msg":"${MESSAGE}"}\n`
  );
}

/**
 * One line per request at info, once answered: method, route template, status, duration and the
 * key's id, with the request id and trace id the request's logger carries. Never the URL of a
 * matched route (its template says what it is); for an unmatched one, the URL as loggableUrl
 * keeps it, without query values other than the interface's. At debug, a line on arrival too.
 * Registered only when the logger would print the lines.
 */
export const accessLogPlugin = fp<AccessLogOptions>(
  async (app, options) => {
    const level = app.log.level;
    if (level === 'debug' || level === 'trace') {
      app.addHook('onRequest', (request, _reply, done) => {
        request.log.debug({ req: request }, 'incoming request');
        done();
      });
    }
    if (QUIET.has(level)) return;
    const { sampleSuccess, lines } = options;
    const random = options.random ?? Math.random;
    app.addHook('onResponse', (request, reply, done) => {
      const status = reply.statusCode;
      if (status < 400 && sampleSuccess < 1 && random() >= sampleSuccess) return done();
      const entry = entryOf(request, status, reply.elapsedTime);
      if (lines === undefined) request.log.info(entry, MESSAGE);
      else lines.write(accessLine(lines, request.id, entry));
      done();
    });
  },
  { name: 'access-log' },
);
