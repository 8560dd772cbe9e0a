import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from '../../../config/config.js';
import type { Dependency } from '../../../domain/ports.js';
import { collectProcessMetrics, type Metrics } from '../../../telemetry/metrics.js';
import { createBaseApp } from '../base-app.js';
import { ErrorSchema } from '../../errors/error.schema.js';
import { refusalWarnings } from '../../server/api-server.js';
import { refuseOtherMethods } from '../../methods.js';
import { refuseUnrouted } from '../../not-found.js';
import { registerMetrics } from './metrics.route.js';
import { Readiness } from './readiness.js';
import { buildDetails, registerHealth } from './health.route.js';
import { OPERATIONS_ENDPOINTS, OPS_PATHS } from '../../scopes.js';
import type { JsonSchema } from '../../validation/validator-compiler.js';

/** What the operations app uses, out of the process's services. */
export interface OpsAppServices {
  readonly config: Config;
  readonly dependencies: readonly Dependency[];
  readonly metrics: Metrics;
}

const GET_HEAD = ['GET', 'HEAD'];

/**
 * The operations listener (OPS_PORT): /healthz (with the commit and Node.js version), /readyz,
 * /metrics and /version, and nothing else, on the same base as the other listeners
 * (src/http/apps/base-app.ts). Readiness is the public listener's: `draining` says when that one is
 * draining, and /readyz here answers 503 then too. No key and no budget: the listener is meant
 * for a private address (OPS_HOST, 127.0.0.1 by default). The caller owns listening and closing.
 */
export async function buildOpsApp(deps: {
  services: OpsAppServices;
  draining: () => boolean;
  logger?: FastifyBaseLogger;
}): Promise<FastifyInstance> {
  const { config, dependencies, metrics } = deps.services;
  collectProcessMetrics(metrics);
  const warnRefused = refusalWarnings();
  const app = await createBaseApp({
    config,
    ...(deps.logger ? { logger: deps.logger.child({ listener: 'ops' }) } : {}),
    schemas: [ErrorSchema] as unknown as JsonSchema[],
    onConnectionRefused: (self, cap, address) => {
      metrics.connectionsRefused.inc({ cap });
      warnRefused(self.log, cap, address);
    },
  });
  // Any other path: 404 before any body is read.
  app.addHook('onRequest', refuseUnrouted());
  const readiness = new Readiness(dependencies, deps.draining, metrics);
  registerHealth(app, readiness, { details: true });
  registerMetrics(app, metrics, readiness);
  const details = buildDetails();
  app.get(OPERATIONS_ENDPOINTS.version, { schema: { hide: true } }, async () => details);
  for (const url of OPS_PATHS) refuseOtherMethods(app, url, GET_HEAD);
  return app;
}
