import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import type { Config } from '../../config/config.js';
import type { RequestTracing } from '../../telemetry/tracing.js';
import { handleError } from '../errors/error-handler.js';
import {
  answerClientError,
  apiServerFactory,
  type ConnectionCap,
  type RateLimitLines,
} from '../server/api-server.js';
import { routeEveryMethod } from '../methods.js';
import type { RequestListener, ServeFirst } from '../fast-path/fast-path.js';
import { AnswerRecorder } from '../answers/answer-recorder.js';
import { genRequestId } from '../answers/request-id.js';
import { EVERY_ANSWER_HEADERS, REQUEST_ID_HEADER } from '../answers/response-headers.js';
import { LazyChildLogger } from '../../telemetry/logging/lazy-child-logger.js';
import { noRouteFor } from '../not-found.js';
import { answerHeadersPlugin } from '../plugins/answer-headers.plugin.js';
import { answerRecordPlugin } from '../plugins/answer-record.plugin.js';
import { hostHeaderPlugin } from '../plugins/host-header.plugin.js';
import { jsonBodyPlugin } from '../plugins/json-body.plugin.js';
import { BODY_LIMIT_BYTES } from '../request-limits.js';
import { createValidatorCompiler, type JsonSchema } from '../validation/validator-compiler.js';

/** What differs between the listeners built on the same base (the pet API, the admin API). */
export interface BaseAppOptions {
  config: Config;
  /** The process's logger; absent means no logging. */
  logger?: FastifyBaseLogger;
  /** Schemas referenced by $id from the routes: validation and the OpenAPI components. */
  schemas: readonly JsonSchema[];
  /** Told of every connection closed at once for being over a cap. */
  onConnectionRefused: (app: FastifyInstance, cap: ConnectionCap, address: string) => void;
  /**
   * Errors raised before routing (a path that is not valid percent-encoding) still get the Error
   * body; this runs first, e.g. to authenticate and count the request as its scope would.
   */
  beforeFrameworkError?: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /**
   * Runs before a request is refused for its framing (request-framing.ts), to draw the refusal
   * from the client's budget with the rate-limit headers, as the listener's other answers.
   */
  beforeFramingRefusal?: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /** Headers for the refusals Node makes before routing (431, bad framing, 408), by address. */
  clientErrorHeaders?: RateLimitLines;
  /** A span per request, and its trace id on every log line of it; absent, the default, is off. */
  tracing?: RequestTracing;
  /** Sees each request before Fastify does, and answers it or hands it on (the fast path). */
  serveFirst?: ServeFirst;
  /** What is logged and counted of each answer, when the caller made it; else the log only. */
  recorder?: AnswerRecorder;
  /** The headers of every answer (answerHeadersFor); EVERY_ANSWER_HEADERS when absent. */
  answerHeaders?: Readonly<Record<string, string>>;
  /** Runs as each request arrives (Storage.pollCommitReplies). */
  onArrival?: (() => void) | undefined;
}

type ValidatorBuilder = NonNullable<
  NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
>['buildValidator'];

/** A hop count means: trust that many proxies nearest to us (what proxy-addr does with a number). */
function trustProxyOption(
  value: Config['trustProxy'],
): boolean | string | ((a: string, hop: number) => boolean) {
  return typeof value === 'number' ? (_address, hop) => hop < value : value;
}

/**
 * What every listener of the service shares: the HTTP server with its connection caps and
 * timeouts, request ids, the Error body for every refusal (before routing too), strict JSON bodies
 * and their limits, the access log with redaction, security headers, Host checks, 405 for every
 * method a path does not serve. The caller adds its scope's hooks and routes.
 */
export async function createBaseApp(options: BaseAppOptions): Promise<FastifyInstance> {
  const { config, logger, beforeFrameworkError, tracing } = options;
  const table = options.answerHeaders ?? EVERY_ANSWER_HEADERS;
  const serverFactory = apiServerFactory({
    limits: config.connections,
    timeouts: config.timeouts,
    onRefused: (cap, address) => options.onConnectionRefused(app, cap, address),
    ...(options.onArrival ? { onArrival: options.onArrival } : {}),
  });
  const first = options.serveFirst;
  const listener = (handler: RequestListener): RequestListener =>
    first === undefined ? handler : (request, response) => first(request, response, handler);
  const validatorCompiler = createValidatorCompiler(options.schemas);
  const app = Fastify({
    // Our validator from the start: without one here Fastify requires its Ajv compiler (Ajv's JTD
    // half with it) when it is created, only for setValidatorCompiler below to replace it.
    // (Fastify's typings know only Ajv's builders; it calls the builder and uses what it returns
    // as setValidatorCompiler would.)
    schemaController: {
      compilersFactory: {
        buildValidator: (() => validatorCompiler) as unknown as ValidatorBuilder,
      },
    },
    // With tracing, everything done for a request runs inside the request's span.
    serverFactory: (handler, opts) => {
      const serve = listener(handler);
      return serverFactory(
        tracing
          ? (request, response) =>
              tracing.aroundRequest(request, response, () => serve(request, response))
          : serve,
        opts,
      );
    },
    ...(logger
      ? {
          childLoggerFactory: (parent, bindings, opts, request) => {
            const traceId = tracing?.traceIdOf(request);
            const all = traceId === undefined ? bindings : { ...bindings, traceId };
            return new LazyChildLogger(parent, all, opts);
          },
        }
      : {}),
    // While closing, a request that still reaches a route (on a connection kept open to finish
    // one in flight) is served normally, with Connection: close, rather than Fastify's own 503.
    return503OnClosing: false,
    ...(logger ? { loggerInstance: logger } : { logger: false }),
    genReqId: genRequestId,
    // Per-request lines come from the answer recorder (answer-record.plugin.ts).
    logController: new LogController({
      requestIdLogLabel: 'requestId',
      disableRequestLogging: true,
    }),
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: trustProxyOption(config.trustProxy),
    frameworkErrors: (error, request, reply) => {
      void answerFrameworkError(error, request, reply, table, beforeFrameworkError);
    },
    // What Node refuses before Fastify sees a request (bad framing, big headers, timeouts).
    // Fastify calls it bound to the instance.
    clientErrorHandler: function (this: FastifyInstance, error, socket) {
      answerClientError(error, socket, this.log, options.clientErrorHeaders);
    },
  });

  routeEveryMethod(app);
  app.decorateRequest('routeInfo', undefined);
  for (const schema of options.schemas) app.addSchema(schema);
  app.setValidatorCompiler(validatorCompiler);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(async (request) => {
    throw noRouteFor(request);
  });
  await app.register(jsonBodyPlugin);
  await app.register(answerHeadersPlugin, { table });
  const recorder =
    options.recorder ??
    new AnswerRecorder({ logger, tracing, sampleSuccess: config.logSampleSuccess });
  await app.register(answerRecordPlugin, { recorder });
  await app.register(hostHeaderPlugin, {
    ...(options.beforeFramingRefusal ? { beforeRefusal: options.beforeFramingRefusal } : {}),
  });
  return app;
}

async function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
  table: Readonly<Record<string, string>>,
  before: BaseAppOptions['beforeFrameworkError'],
): Promise<void> {
  // No onRequest hook ran: the headers of every answer are set here.
  void reply.header(REQUEST_ID_HEADER, request.id);
  void reply.headers(table);
  try {
    await before?.(request, reply);
    handleError(error, request, reply);
  } catch (refusal) {
    handleError(refusal, request, reply);
  }
}
