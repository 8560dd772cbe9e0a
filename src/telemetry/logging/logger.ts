import { type DestinationStream, pino, type Logger, type LoggerOptions } from 'pino';
import { redactSecrets } from '../../config/redact.js';
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
  // Decoded again while anything changes, a few times: a key encoded twice (`pa%255Flive...`)
  // reads as a key to anything that decodes the path twice, and must not be logged either.
  let decoded = masked;
  for (let round = 0; round < MAX_DECODINGS && decoded.includes('%'); round++) {
    const next = percentDecoded(decoded);
    if (next === decoded) break;
    decoded = next;
    if (decoded.search(API_KEY_SEARCH) >= 0) return decoded.replace(API_KEY_SEARCH, maskKey);
  }
  return masked;
}

/** How many layers of percent-encoding scrubKeys looks through. */
const MAX_DECODINGS = 4;

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

/**
 * The process's logger: Fastify logs requests through it, and the services their background work.
 * Headers are logged only with failures (5xx); credential headers are then redacted by path,
 * whatever they hold, and key-shaped text anywhere is masked.
 */
export function createLogger(options: {
  level: string;
  /** Where lines go; standard output (stdoutDestination) when absent. */
  stream?: DestinationStream;
  /** Passwords of DATABASE_URL and REDIS_URL (urlSecrets): masked in every line. */
  secrets?: readonly string[];
}): Logger {
  const settings: LoggerOptions = {
    level: options.level,
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
      err: (error: Error) => withoutCommandArgs(pino.stdSerializers.err(error)),
    },
    hooks: {
      // Messages may quote what a client sent (a path in a 404); keys are masked in all of them.
      // The message is replaced in place: the array is this call's own (pino gathers it per call),
      // so a line costs no copies of its arguments.
      logMethod(args, method) {
        const list = args as unknown[];
        const first = list[0];
        const second = list[1];
        if (typeof first === 'string') list[0] = scrubKeys(first);
        else if (typeof second === 'string') list[1] = scrubKeys(second);
        return method.apply(this, args);
      },
    },
  };
  return pino(settings, redacting(options.stream ?? stdoutDestination(), options.secrets ?? []));
}

/**
 * A client library's error may carry the command it refused with its arguments (ioredis: a
 * refused `AUTH user password` as `command.args`): the arguments are never logged, the name is.
 */
function withoutCommandArgs<T extends object>(serialized: T): T {
  const command = (serialized as { command?: unknown }).command;
  if (typeof command !== 'object' || command === null || !('args' in command)) return serialized;
  const rest: Record<string, unknown> = { ...command };
  delete rest.args;
  return { ...serialized, command: rest };
}

/**
 * The destination with every line passed through redactSecrets: the last guard, for a secret
 * quoted where nothing above expected one (an error message of a driver, say).
 */
function redacting(stream: DestinationStream, secrets: readonly string[]): DestinationStream {
  const target = stream as DestinationStream &
    Partial<Record<'flush' | 'flushSync' | 'end', Method>>;
  const wrapper: DestinationStream & Partial<Record<'flush' | 'flushSync' | 'end', Method>> = {
    write: (line: string) => target.write(redactSecrets(line, secrets)),
  };
  // What pino and the exit path call on a buffered destination, on the destination itself.
  for (const name of ['flush', 'flushSync', 'end'] as const) {
    const method = target[name];
    if (typeof method === 'function') wrapper[name] = method.bind(target);
  }
  return wrapper;
}

type Method = (...args: unknown[]) => unknown;

/** How long a line waits at most for others to share its write. */
export const LOG_FLUSH_MS = 100;

/** How many bytes of lines wait before they are written together. */
export const LOG_BATCH_BYTES = 16 * 1024;

/**
 * Standard output through pino's destination (sonic-boom), written synchronously once
 * LOG_BATCH_BYTES of lines wait, and flushed every LOG_FLUSH_MS so an idle server's lines are not
 * held back. Asynchronous writes hand each batch to the thread pool, which cost a quarter more CPU
 * per request (bench/results/2026-11-29-request-path.md); a reader that stops reading stops the
 * process, as it would stop `console.log`.
 *
 * Lines are handed over as bytes (sonic-boom's `contentMode: 'buffer'`): in its text mode
 * sonic-boom measures the whole pending batch again on every line, so a batch of many lines costs
 * more per line than a few system calls save; as bytes each line is measured once.
 */
export function stdoutDestination(): BufferedDestination {
  const destination = pino.destination({
    dest: 1,
    sync: true,
    minLength: LOG_BATCH_BYTES,
    maxWrite: 4 * LOG_BATCH_BYTES,
    contentMode: 'buffer',
  });
  // Not sonic-boom's periodicFlush: it writes every period, an empty write when nothing waits, so
  // an idle server made ten system calls a second. Here a period flushes only if a line came.
  let waiting = false;
  const timer = setInterval(() => {
    if (!waiting) return;
    waiting = false;
    destination.flush();
  }, LOG_FLUSH_MS).unref();
  // In buffer mode sonic-boom's write takes a Buffer; its types only know the text mode.
  const writeBytes = destination.write.bind(destination) as unknown as (bytes: Buffer) => boolean;
  // pino flushes an asynchronous destination when the process exits, not a synchronous one that
  // buffers: the last lines (the shutdown's) are written here.
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // Standard output is gone (a closed pipe): nothing left to write to.
    }
  });
  return {
    write: (line) => {
      waiting = true;
      return writeBytes(Buffer.from(line, 'utf8'));
    },
    flush: (callback) => destination.flush(callback),
    flushSync: () => destination.flushSync(),
    end: () => {
      clearInterval(timer);
      destination.end();
    },
  };
}

/** A destination that holds lines back: pino's flush, and the exit path's flushSync and end. */
export interface BufferedDestination {
  write(line: string): boolean;
  flush(callback?: (error?: Error) => unknown): void;
  flushSync(): void;
  end(): void;
}
