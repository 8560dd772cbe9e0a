import { hostname } from 'node:os';
import { pino, type Logger, type LoggerOptions } from 'pino';
import { API_KEY_SEARCH } from '../../domain/api-keys/key-format.js';

/** The query parameters of the interface; no other query value is ever logged. */
const LOGGED_PARAMETERS = new Set(['limit', 'status', 'cursor']);

const maskKey = (key: string) => `${key.slice(0, 8)}[redacted]`;

/** Every %XX as the character of that code; never throws, unlike decodeURIComponent. */
function percentDecoded(text: string): string {
  return text.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) =>
    String.fromCharCode(parseInt(hex, 16)),
  );
}

/**
 * Anything shaped like an API key, wherever a client put it (a path, a header, a message), also
 * behind percent-encoding (`pa%5Flive%5F...` in a path): then the text is shown decoded.
 */
export function scrubKeys(text: string): string {
  const masked = text.replace(API_KEY_SEARCH, maskKey);
  if (!masked.includes('%')) return masked;
  const decoded = percentDecoded(masked);
  return decoded.search(API_KEY_SEARCH) < 0 ? masked : decoded.replace(API_KEY_SEARCH, maskKey);
}

/**
 * The URL as logged: the path, and of the query only the interface's parameters, so a key sent as
 * `?api_key=...` or `?access_token=...` never reaches a log line.
 */
export function loggableUrl(url: string): string {
  const mark = url.indexOf('?');
  const path = scrubKeys(mark === -1 ? url : url.slice(0, mark));
  if (mark === -1) return path;
  const kept = new URLSearchParams();
  let dropped = 0;
  for (const [name, value] of new URLSearchParams(url.slice(mark + 1))) {
    if (LOGGED_PARAMETERS.has(name)) kept.append(name, scrubKeys(value));
    else dropped += 1;
  }
  const query = kept.toString();
  return `${path}${query === '' ? '' : `?${query}`}${dropped > 0 ? ` (+${dropped} other parameters)` : ''}`;
}

/** Request headers as a failure's log line shows them: key-shaped values masked. */
export function loggableHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string | string[] | undefined> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      Array.isArray(value) ? value.map(scrubKeys) : value === undefined ? value : scrubKeys(value),
    ]),
  );
}

interface LoggedRequest {
  method?: string;
  url?: string;
  ip?: string;
  headers?: Record<string, unknown>;
}

/** Where a logger's lines go, and the bindings every line of it carries, as pino writes them. */
export interface JsonLines {
  write(line: string): void;
  /** `,"pid":...,"hostname":"..."`: what pino writes after the time. */
  readonly base: string;
}

const jsonLines = new WeakMap<object, JsonLines>();

/**
 * The destination of a logger createLogger made, for the one line written often enough to be
 * formatted by hand (the access line, src/http/plugins/access-log.plugin.ts); undefined for any
 * other logger, which then formats all its lines itself.
 */
export function jsonLinesOf(logger: object): JsonLines | undefined {
  return jsonLines.get(logger);
}

/**
 * The process's logger: Fastify logs requests through it, and the services their background work.
 * Headers are logged only with failures (5xx); credential headers are then redacted by path,
 * whatever they hold, and key-shaped text anywhere is masked.
 */
export function createLogger(options: {
  level: string;
  /** Where lines go; standard output when absent. */
  stream?: { write(line: string): void };
}): Logger {
  // pino's own default, spelled out so that a line formatted by hand starts the same way.
  const base = { pid: process.pid, hostname: hostname() };
  const settings: LoggerOptions = {
    level: options.level,
    base,
    redact: {
      paths: ['headers.authorization', 'headers.cookie', 'headers["proxy-authorization"]'],
      censor: '[redacted]',
    },
    serializers: {
      req: (request: LoggedRequest) => ({
        method: request.method,
        url: loggableUrl(request.url ?? ''),
        remoteAddress: request.ip,
      }),
      res: (reply: { statusCode?: number }) => ({ statusCode: reply.statusCode }),
      err: pino.stdSerializers.err,
    },
    hooks: {
      // Messages may quote what a client sent (a path in a 404); keys are masked in all of them.
      logMethod(args, method) {
        const [first, ...rest] = args;
        if (typeof first === 'string') return method.apply(this, [scrubKeys(first), ...rest]);
        const [message, ...more] = rest;
        if (typeof message === 'string') {
          return method.apply(this, [first, scrubKeys(message), ...(more as unknown[])]);
        }
        return method.apply(this, args);
      },
    },
  };
  if (options.stream === undefined) return pino(settings);
  const logger = pino(settings, options.stream);
  const stream = options.stream;
  jsonLines.set(logger, {
    write: (line) => stream.write(line),
    base: JSON.stringify(base).replace(/^\{/, ',').slice(0, -1),
  });
  return logger;
}
