import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../../telemetry/metrics.js';
import { OPERATIONS_ENDPOINTS } from '../../scopes.js';
import type { Readiness } from './readiness.js';

/**
 * GET /metrics: the registry in Prometheus text format, the readiness gauges refreshed first
 * unless a check ran lately (src/http/apps/ops/readiness.ts).
 */
export function registerMetrics(
  app: FastifyInstance,
  metrics: Metrics,
  readiness: Readiness,
): void {
  app.get(OPERATIONS_ENDPOINTS.metrics, { schema: { hide: true } }, async (_request, reply) => {
    await readiness.refreshIfStale();
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });
}
