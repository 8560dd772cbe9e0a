import type { IncomingMessage } from 'node:http';
import { loggableUrl } from '../../telemetry/logging/logger.js';
import type { Metrics } from '../../telemetry/metrics.js';
import { seriesCache3 } from '../../telemetry/series-cache.js';
import type { RequestTracing } from '../../telemetry/tracing.js';

/** What is known of a request once it is answered, whichever path answered it. */
export interface Answered {
  readonly requestId: string;
  readonly method: string;
  /** The metrics label: the operationId, else the route's pattern, else `unmatched`. */
  readonly operation: string;
  /** The matched route's template (`/v1/pets/{petId}`); undefined when no route matched. */
  readonly route: string | undefined;
  /** The request target; logged (without unknown query values) only when no route matched. */
  readonly url: string;
  readonly status: number;
  readonly seconds: number;
  /** The API key that authenticated the request, if one did. */
  readonly key: { readonly id: string; readonly plan: string } | undefined;
  readonly deprecated: boolean;
}

/** Levels at which a request also logs its arrival. */
export const ARRIVAL_LEVELS: ReadonlySet<string> = new Set(['debug', 'trace']);
const QUIET = new Set(['fatal', 'error', 'warn', 'silent']);
export const ACCESS_MESSAGE = 'request completed';

/** What the recorder asks of a logger (the process's pino logger, or a child of it). */
export interface AnswerLogger {
  readonly level: string;
  info(fields: object, message?: string): void;
  debug(fields: object, message: string): void;
  child(bindings: Record<string, unknown>): AnswerLogger;
}

export interface AnswerRecorderOptions {
  /** The listener's logger; absent means no logging. */
  readonly logger?: AnswerLogger | undefined;
  /** The listener's request metrics; absent means answers are not counted (admin, ops). */
  readonly metrics?: Metrics['http'] | undefined;
  readonly tracing?: RequestTracing | undefined;
  /** LOG_SAMPLE_SUCCESS: the share of 2xx/3xx access lines written; 4xx and 5xx always are. */
  readonly sampleSuccess: number;
  /** Draws the sample; Math.random unless a test fixes it. */
  readonly random?: () => number;
}

/**
 * THE RECORD of an answer, whichever path wrote it (a Fastify hook, the fast path): the access line
 * (one at info per answered request: method, route template, status, duration, the key's id, with
 * the request id and trace id; never the URL of a matched route, whose template says what it is),
 * the request metrics, and the request's span. At debug, a line on arrival too.
 */
export class AnswerRecorder {
  /** Whether requests log their arrival (debug). */
  readonly logsArrivals: boolean;
  readonly #logsAnswers: boolean;
  readonly #options: AnswerRecorderOptions;
  readonly #random: () => number;
  /**
   * The access line's logger of each matched route, method and status (seriesCache3: looked up
   * with the values the request already holds), made from the first logger that asks.
   */
  #routeLoggers: ((route: string, method: string, status: number) => AnswerLogger) | undefined;

  constructor(options: AnswerRecorderOptions) {
    const level = options.logger?.level ?? 'silent';
    this.#options = options;
    this.#random = options.random ?? Math.random;
    this.logsArrivals = options.logger !== undefined && ARRIVAL_LEVELS.has(level);
    this.#logsAnswers = options.logger !== undefined && !QUIET.has(level);
  }

  /** The arrival line (debug): method, URL as logged, client address. */
  arrived(request: IncomingMessage, requestId: string, ip: string | undefined): void {
    if (!this.logsArrivals) return;
    const traceId = this.#options.tracing?.traceIdOf(request);
    this.#options.logger?.debug(
      { requestId, traceId, req: { method: request.method, url: request.url, ip } },
      'incoming request',
    );
  }

  answered(request: IncomingMessage, answer: Answered): void {
    const { logger, metrics, tracing, sampleSuccess } = this.#options;
    const { method, operation, route, status, seconds, key } = answer;
    metrics?.answered({
      operation,
      method,
      status,
      seconds,
      deprecatedPlan: answer.deprecated ? key?.plan : undefined,
    });
    tracing?.answered(request, { method, route, status, keyId: key?.id });
    if (!this.#logsAnswers) return;
    if (status < 400 && sampleSuccess < 1 && this.#random() >= sampleSuccess) return;
    if (logger === undefined) return;
    const requestId = answer.requestId;
    const traceId = tracing?.traceIdOf(request);
    const durationMs = Math.round(seconds * 10_000) / 10;
    const keyId = key?.id;
    // The message as a field, last, as pino writes a message argument: it is constant, so the
    // logMethod hook has nothing to scrub in it.
    if (route === undefined) {
      const url = loggableUrl(answer.url);
      logger.info({
        requestId,
        traceId,
        method,
        url,
        status,
        durationMs,
        keyId,
        msg: ACCESS_MESSAGE,
      });
    } else {
      this.#routeLogger(logger, route, method, status).info({
        requestId,
        traceId,
        durationMs,
        keyId,
        msg: ACCESS_MESSAGE,
      });
    }
  }

  /**
   * A child of the logger bound to a matched route's method, template and status: pino serializes
   * a child's bindings once, through the same serializers and redaction, and writes them after the
   * process's own fields in every line of the child. A route's lines then serialize only what
   * varies per request. Bounded by the route table, the methods Node's parser accepts and the
   * statuses the service answers with.
   */
  #routeLogger(logger: AnswerLogger, route: string, method: string, status: number): AnswerLogger {
    this.#routeLoggers ??= seriesCache3((template: string, verb: string, code: number) =>
      logger.child({ method: verb, route: template, status: code }),
    );
    return this.#routeLoggers(route, method, status);
  }
}
