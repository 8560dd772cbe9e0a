import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from '../../telemetry/metrics.js';
import { seriesCache } from '../../telemetry/series-cache.js';
import type { Readiness } from '../readiness.js';
import { OPERATIONS_ENDPOINTS } from '../scopes.js';

/** The operationId of the matched route, else its path pattern, else `unmatched` (bounded labels). */
function operationOf(request: FastifyRequest): string {
  const options = request.routeOptions;
  const operationId = (options.schema as { operationId?: unknown } | undefined)?.operationId;
  if (typeof operationId === 'string') return operationId;
  return options.url ?? 'unmatched';
}

/**
 * Counts every answer of the listener. The labelled series are looked up once per label
 * combination (there are few) and kept, so counting costs no label hashing per request. It only
 * counts: the per-key count of deprecated calls, which is stored, is kept by the admission service
 * (src/domain/admission), told of the operation called. /metrics is served by registerMetrics, on
 * the listener the configuration names.
 */
export const metricsPlugin = fp<{ metrics: Metrics }>(
  async (app, { metrics }) => {
    const counters = seriesCache((series) => {
      const [operation = '', method = '', status = ''] = series.split(' ');
      return metrics.requests.labels(operation, method, status);
    });
    const timers = seriesCache((operation) => metrics.duration.labels(operation));
    // Kept like the others: labelling per call hashed the labels on every getPet (5% of its CPU).
    const deprecatedCalls = seriesCache((series) => {
      const [operation = '', plan = ''] = series.split(' ');
      return metrics.deprecatedCalls.labels(operation, plan);
    });
    app.addHook('onResponse', (request, reply, done) => {
      const operation = operationOf(request);
      counters(`${operation} ${request.method} ${reply.statusCode}`).inc();
      timers(operation).observe(reply.elapsedTime / 1000);
      const deprecated = (request.routeOptions.schema as { deprecated?: unknown } | undefined)
        ?.deprecated;
      if (deprecated === true && request.apiKey !== undefined) {
        deprecatedCalls(`${operation} ${request.apiKey.plan}`).inc();
      }
      done();
    });
  },
  { name: 'metrics' },
);

/**
 * GET /metrics: the registry in Prometheus text format, the readiness gauges refreshed first
 * unless a check ran lately (src/http/readiness.ts).
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
