import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from '../../../config/config.js';
import type { AdmissionService } from '../../../domain/admission/admission-service.js';
import { KEY_PREFIX } from '../../../domain/api-keys/key-format.js';
import type { StoreCache } from '../../../domain/cache/store-cache.js';
import type { Clock } from '../../../domain/clock.js';
import type { PetService } from '../../../domain/pets/pet-service.js';
import type { Dependency, Storage } from '../../../domain/ports.js';
import { collectProcessMetrics, type Metrics } from '../../../telemetry/metrics.js';
import type { RequestTracing } from '../../../telemetry/tracing.js';
import { AnswerRecorder } from '../../answers/answer-recorder.js';
import type { CachedAnswer } from '../../answers/cached-answer.js';
import { PetAnswers } from '../../answers/pet-answers.js';
import { rateLimitHeaderLines } from '../../answers/rate-limit-headers.js';
import { answerHeadersFor, CORS_EXPOSED_HEADERS } from '../../answers/response-headers.js';
import { ErrorSchema } from '../../errors/error.schema.js';
import { createFastPath } from '../../fast-path/fast-path.js';
import { checkFastPathRules } from '../../fast-path/fast-path-rules.js';
import { refuseOtherMethods } from '../../methods.js';
import { refuseUnrouted } from '../../not-found.js';
import { openApiPlugin } from '../../openapi/openapi.plugin.js';
import { API_SCOPE, isUnder, OPERATIONS_ENDPOINTS } from '../../scopes.js';
import { ApiServer, refusalWarnings } from '../../server/api-server.js';
import type { JsonSchema } from '../../validation/validator-compiler.js';
import { createBaseApp } from '../base-app.js';
import { registerHealth } from '../ops/health.route.js';
import { registerMetrics } from '../ops/metrics.route.js';
import { Readiness } from '../ops/readiness.js';
import { createGuard, guarded } from './api-key-guard.js';
import { docsPlugin } from './docs.plugin.js';
import {
  NewPetSchema,
  petSerializers,
  PetSchema,
  PetsSchema,
  PetStatusSchema,
} from './pets/pet.schema.js';
import { v1Routes } from './v1.routes.js';

/** What the app uses; src/services.ts builds it from the configuration. */
export interface AppServices {
  readonly config: Config;
  readonly clock: Clock;
  /** Decides who gets in to the API scope. */
  readonly admission: AdmissionService;
  readonly pets: PetService;
  /** Every in-memory copy of stored data, and when it is invalidated. */
  readonly cache: StoreCache<CachedAnswer>;
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

/**
 * The public listener: the pet API under /v1 with its fast path in front (src/http/fast-path/),
 * its OpenAPI document and /docs, and the operations endpoints unless the ops listener serves them.
 * The caller owns listening and closing (src/server-main.ts, tests).
 */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config, clock, admission, pets, cache, dependencies, metrics } = deps.services;
  collectProcessMetrics(metrics);
  const admit = { admission, metrics, keyPrefix: KEY_PREFIX[config.environment] };
  const guard = createGuard(admit, 'api_key');
  const addressGuard = createGuard(admit, 'address');
  const warnRefused = refusalWarnings();
  const recorder = new AnswerRecorder({
    logger: deps.logger,
    metrics: metrics.http,
    tracing: deps.tracing,
    sampleSuccess: config.logSampleSuccess,
  });
  const cors = config.corsOrigins.length > 0;
  const answerHeaders = answerHeadersFor({ cors });
  const answers = new PetAnswers(config.publicBaseUrl, petSerializers());
  // At debug every request logs its arrival with request.ip, which only Fastify works out
  // (trustProxy): the fast path is off then (docs/architecture.md).
  const fastPath = recorder.logsArrivals
    ? undefined
    : createFastPath({ admission, cache, pets, answers, recorder, clock, answerHeaders, cors });
  const app = await createBaseApp({
    config,
    ...(deps.logger ? { logger: deps.logger } : {}),
    ...(deps.tracing ? { tracing: deps.tracing } : {}),
    recorder,
    answerHeaders,
    ...(fastPath ? { serveFirst: fastPath } : {}),
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
    // A request refused for its framing is counted against its address, as a keyless one.
    beforeFramingRefusal: (request, reply) => guarded(addressGuard, request, reply),
    // In the API scope, the same authentication and counting as every other request.
    beforeFrameworkError: async (request, reply) => {
      if (isUnder(API_SCOPE, request.url)) await guarded(guard, request, reply);
    },
  });
  app.decorateRequest('apiKey', undefined);
  if (cors) {
    const { default: corsPlugin } = await import('@fastify/cors');
    await app.register(corsPlugin, {
      origin: [...config.corsOrigins],
      exposedHeaders: [...CORS_EXPOSED_HEADERS],
    });
  }
  // After the plugins above, so that the refusal is logged and carries their headers.
  app.addHook(
    'onRequest',
    refuseUnrouted((url) => isUnder(API_SCOPE, url)),
  );

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
    corsEnabled: cors,
    cache,
    answers,
  });
  if (config.docs) await app.register(docsPlugin);
  // A hook on the fast path's routes that fast-path-rules.ts does not declare stops the start.
  if (fastPath) app.addHook('onReady', checkFastPathRules(app));
  return app;
}
