import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { Config } from '../config/config.js';
import type { AdmissionService } from '../domain/admission/admission-service.js';
import type { Clock } from '../domain/clock.js';
import type { PetService } from '../domain/pets/pet-service.js';
import type { StoreCopies } from '../domain/pets/store-copies.js';
import type { Dependency } from '../domain/ports.js';
import { createGuard, type Guard } from './api-key-guard.js';
import { ErrorSchema } from './errors/error.schema.js';
import { answerClientError, apiServerFactory, refusalWarnings } from './http-server.js';
import { handleError } from './errors/error-handler.js';
import { accessLogPlugin } from './plugins/access-log.plugin.js';
import { docsPlugin } from './plugins/docs.plugin.js';
import { BODY_LIMIT_BYTES, jsonBodyPlugin } from './plugins/json-body.plugin.js';
import { noRouteFor, refuseUnrouted } from './not-found.js';
import { createMetrics, metricsPlugin } from './plugins/metrics.plugin.js';
import { openApiPlugin } from './plugins/openapi.plugin.js';
import { hostHeaderPlugin } from './plugins/host-header.plugin.js';
import { genRequestId, requestIdPlugin } from './plugins/request-id.plugin.js';
import { securityHeadersPlugin } from './plugins/security-headers.plugin.js';
import { RATE_LIMIT_HEADER_NAMES, rateLimitHeaderLines } from './rate-limit-headers.js';
import { API_SCOPE, isUnder, OPERATIONS_ENDPOINTS } from './scopes.js';
import { registerHealth } from './routes/health.route.js';
import { NewPetSchema, PetSchema, PetsSchema, PetStatusSchema } from './routes/pets/pet.schema.js';
import { v1Routes } from './routes/v1.routes.js';
import { refuseOtherMethods, routeEveryMethod } from './methods.js';
import { createValidatorCompiler, type JsonSchema } from './validator-compiler.js';
import { KEY_PREFIX } from '../domain/api-keys/key-format.js';

/** What the app uses; src/services.ts builds it from the configuration. */
export interface AppServices {
  readonly config: Config;
  readonly clock: Clock;
  /** Decides who gets in to the API scope. */
  readonly admission: AdmissionService;
  readonly pets: PetService;
  /** Every in-memory copy of stored data, and the rule of when it may be kept. */
  readonly copies: StoreCopies;
  /** Asked by /readyz, each by name. */
  readonly dependencies: readonly Dependency[];
}

export interface AppDependencies {
  services: AppServices;
  /** The process's logger (createLogger); absent means no logging. */
  logger?: FastifyBaseLogger;
}

const GET_HEAD = ['GET', 'HEAD'];
const SHARED_SCHEMAS = [PetStatusSchema, NewPetSchema, PetSchema, PetsSchema, ErrorSchema];

/** A hop count means: trust that many proxies nearest to us (what proxy-addr does with a number). */
function trustProxyOption(
  value: Config['trustProxy'],
): boolean | string | ((a: string, hop: number) => boolean) {
  return typeof value === 'number' ? (_address, hop) => hop < value : value;
}

/** Builds the application; the caller owns listening and closing (src/main.ts, tests). */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config, clock, admission, pets, copies, dependencies } = deps.services;
  const metrics = createMetrics();
  const admit = { admission, metrics, keyPrefix: KEY_PREFIX[config.environment] };
  const guard = createGuard(admit, 'api_key');
  const warnRefused = refusalWarnings();
  const app = Fastify({
    serverFactory: apiServerFactory({
      limits: config.connections,
      timeouts: config.timeouts,
      onRefused: (cap, address) => {
        metrics.connectionsRefused.inc({ cap });
        warnRefused(app.log, cap, address);
      },
    }),
    // While closing, a request that still reaches a route (on a connection kept open to finish
    // one in flight) is served normally, with Connection: close, rather than Fastify's own 503.
    return503OnClosing: false,
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    genReqId: genRequestId,
    // Per-request lines come from the access-log plugin, at debug level.
    logController: new LogController({
      requestIdLogLabel: 'requestId',
      disableRequestLogging: true,
    }),
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: trustProxyOption(config.trustProxy),
    // Errors raised before routing (a path that is not valid percent-encoding) still get the Error
    // body, and in the API scope the same authentication and counting as every other request.
    frameworkErrors: (error, request, reply) => {
      void answerFrameworkError(error, request, reply, guard);
    },
    // What Node refuses before Fastify sees a request (bad framing, big headers, timeouts).
    // Fastify calls it bound to the instance.
    clientErrorHandler: function (this: FastifyInstance, error, socket) {
      answerClientError(error, socket, this.log, async (address) =>
        rateLimitHeaderLines(await admission.addressState(address)),
      );
    },
  });
  app.decorateRequest('apiKey', undefined);

  routeEveryMethod(app);
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  app.setValidatorCompiler(createValidatorCompiler(SHARED_SCHEMAS as JsonSchema[]));
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(async (request) => {
    throw noRouteFor(request);
  });
  await app.register(jsonBodyPlugin);
  await app.register(requestIdPlugin);
  await app.register(accessLogPlugin);
  await app.register(securityHeadersPlugin);
  await app.register(hostHeaderPlugin);
  if (config.corsOrigins.length > 0) {
    const { default: cors } = await import('@fastify/cors');
    await app.register(cors, {
      origin: [...config.corsOrigins],
      exposedHeaders: [
        'Link',
        'Location',
        'X-Request-Id',
        'Deprecation',
        'Sunset',
        'Idempotent-Replayed',
        ...RATE_LIMIT_HEADER_NAMES,
      ],
    });
  }
  // After the plugins above, so that the refusal is logged and carries their headers.
  app.addHook(
    'onRequest',
    refuseUnrouted((url) => isUnder(API_SCOPE, url)),
  );

  await app.register(metricsPlugin, { metrics });

  await app.register(openApiPlugin, { config });
  registerHealth(app, dependencies);
  const { health, ready, metrics: metricsPath } = OPERATIONS_ENDPOINTS;
  for (const url of [health, ready, metricsPath]) refuseOtherMethods(app, url, GET_HEAD);
  app.get(
    API_SCOPE.documentPath,
    { schema: { hide: true }, onRequest: createGuard(admit, 'address') },
    async () => app.swagger(),
  );
  refuseOtherMethods(app, API_SCOPE.documentPath, GET_HEAD);
  await app.register(v1Routes, {
    prefix: API_SCOPE.prefix,
    guard,
    pets,
    clock,
    publicBaseUrl: config.publicBaseUrl,
    corsEnabled: config.corsOrigins.length > 0,
    copies,
  });
  await app.register(docsPlugin);
  return app;
}

async function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
  guard: Guard,
): Promise<void> {
  void reply.header('x-request-id', request.id);
  try {
    if (isUnder(API_SCOPE, request.url)) await guard(request, reply);
    handleError(error, request, reply);
  } catch (refusal) {
    handleError(refusal, request, reply);
  }
}
