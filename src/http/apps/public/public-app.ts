import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from '../../../config/config.js';
import type { AdmissionService } from '../../../domain/admission/admission-service.js';
import type { Clock } from '../../../domain/clock.js';
import type { PetService } from '../../../domain/pets/pet-service.js';
import type { StoreCopies } from '../../../domain/pets/store-copies.js';
import type { Dependency, Storage } from '../../../domain/ports.js';
import { collectProcessMetrics, type Metrics } from '../../../telemetry/metrics.js';
import type { RequestTracing } from '../../../telemetry/tracing.js';
import { createGuard, guarded } from './api-key-guard.js';
import { createBaseApp } from '../base-app.js';
import { keptAnswers } from '../../fast-path/fast-path.js';
import { PageAnswers } from './pets/list-pets.route.js';
import { accessLogFor, ARRIVAL_LEVELS } from '../../plugins/access-log.plugin.js';
import { ErrorSchema } from '../../errors/error.schema.js';
import { ApiServer, refusalWarnings } from '../../server/api-server.js';
import { docsPlugin } from './docs.plugin.js';
import { refuseUnrouted } from '../../not-found.js';
import { metricsPlugin } from '../../plugins/metrics.plugin.js';
import { registerMetrics } from '../ops/metrics.route.js';
import { openApiPlugin } from '../../openapi/openapi.plugin.js';
import { Readiness } from '../ops/readiness.js';
import { RATE_LIMIT_HEADER_NAMES, rateLimitHeaderLines } from '../../answers/rate-limit-headers.js';
import { API_SCOPE, isUnder, OPERATIONS_ENDPOINTS } from '../../scopes.js';
import { registerHealth } from '../ops/health.route.js';
import { routeInfo } from '../../route-info.js';
import { NewPetSchema, PetSchema, PetsSchema, PetStatusSchema } from './pets/pet.schema.js';
import { v1Routes } from './v1.routes.js';
import { refuseOtherMethods } from '../../methods.js';
import type { JsonSchema } from '../../validation/validator-compiler.js';
import { KEY_PREFIX } from '../../../domain/api-keys/key-format.js';

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
  /** Shared by every listener of the process and told of storage and Redis (src/services.ts). */
  readonly metrics: Metrics;
  /** Asked as each request arrives to deliver the replies of writes whose commit ended. */
  readonly storage: Pick<Storage, 'pollCommitReplies'>;
}

export interface AppDependencies {
  services: AppServices;
  /** The process's logger (createLogger); absent means no logging. */
  logger?: FastifyBaseLogger;
  /** Traces (src/telemetry/tracing.ts) when the OTEL_* variables turn them on. */
  tracing?: RequestTracing;
}

const GET_HEAD = ['GET', 'HEAD'];
const SHARED_SCHEMAS = [PetStatusSchema, NewPetSchema, PetSchema, PetsSchema, ErrorSchema];

// Looked up at each call, not bound once: the method may be replaced after the app is built (tests).
const pollCommitReplies = (
  storage: Pick<Storage, 'pollCommitReplies'>,
): (() => void) | undefined =>
  storage.pollCommitReplies === undefined ? undefined : () => storage.pollCommitReplies?.();

/** Builds the application; the caller owns listening and closing (src/server-main.ts, tests). */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config, clock, admission, pets, copies, dependencies, metrics } = deps.services;
  collectProcessMetrics(metrics);
  const admit = { admission, metrics, keyPrefix: KEY_PREFIX[config.environment] };
  const guard = createGuard(admit, 'api_key');
  const warnRefused = refusalWarnings();
  const access = accessLogFor({
    logger: deps.logger,
    tracing: deps.tracing !== undefined,
    sampleSuccess: config.logSampleSuccess,
  });
  // Kept copies are answered before Fastify unless something the path does not do is asked of
  // every request: a span (tracing), CORS headers, an arrival line (debug), a line pino formats.
  const keptPath =
    deps.tracing === undefined &&
    config.corsOrigins.length === 0 &&
    !ARRIVAL_LEVELS.has(deps.logger?.level ?? 'info') &&
    (access === undefined || access.formatted);
  const pageAnswers = new PageAnswers(config.publicBaseUrl);
  const app = await createBaseApp({
    config,
    ...(deps.logger ? { logger: deps.logger } : {}),
    ...(deps.tracing ? { tracing: deps.tracing } : {}),
    access,
    ...(keptPath
      ? {
          serveFirst: keptAnswers({
            admission,
            copies,
            pets,
            pageAnswers,
            metrics,
            access,
            clock,
            publicBaseUrl: config.publicBaseUrl,
          }),
        }
      : {}),
    schemas: SHARED_SCHEMAS as JsonSchema[],
    // An acknowledged write is answered as soon as its commit ended, not at the next poll.
    onArrival: pollCommitReplies(deps.services.storage),
    onConnectionRefused: (self, cap, address) => {
      metrics.connectionsRefused.inc({ cap });
      warnRefused(self.log, cap, address);
    },
    // Refusals before routing carry the client address's budget, as every response does.
    clientErrorHeaders: async (address) =>
      rateLimitHeaderLines(await admission.addressState(address)),
    // In the API scope, the same authentication and counting as every other request.
    beforeFrameworkError: async (request, reply) => {
      if (isUnder(API_SCOPE, request.url)) await guarded(guard, request, reply);
    },
  });
  app.decorateRequest('apiKey', undefined);
  const tracing = deps.tracing;
  if (tracing) {
    app.addHook('onResponse', (request, reply, done) => {
      tracing.answered(request.raw, {
        method: request.method,
        route: routeInfo(request).template,
        status: reply.statusCode,
        keyId: request.apiKey?.id,
      });
      done();
    });
  }
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
  const draining = () => app.server instanceof ApiServer && app.server.draining;
  const readiness = new Readiness(dependencies, draining, metrics);
  registerHealth(app, readiness);
  const { health, ready, metrics: metricsPath } = OPERATIONS_ENDPOINTS;
  for (const url of [health, ready]) refuseOtherMethods(app, url, GET_HEAD);
  // With an operations listener (OPS_PORT), /metrics is served there only.
  if (config.ops === undefined) {
    registerMetrics(app, metrics, readiness);
    refuseOtherMethods(app, metricsPath, GET_HEAD);
  }
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
    pageAnswers,
  });
  if (config.docs) await app.register(docsPlugin);
  return app;
}
