import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { OPERATIONS_ENDPOINTS } from '../scopes.js';

/** What the service reports at /metrics. One registry per app, so test servers never share one. */
export interface Metrics {
  readonly registry: Registry;
  readonly requests: Counter<'operation' | 'method' | 'status'>;
  readonly duration: Histogram<'operation'>;
  readonly rateLimited: Counter<'code'>;
  readonly bans: Counter;
  readonly deprecatedCalls: Counter<'operation' | 'plan'>;
  readonly connectionsRefused: Counter<'cap'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'petstore_' });
  return {
    registry,
    requests: new Counter({
      name: 'petstore_http_requests_total',
      help: 'HTTP requests answered, by operation (operationId, or route) and status',
      labelNames: ['operation', 'method', 'status'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'petstore_http_request_duration_seconds',
      help: 'Time from request received to response sent, by operation',
      labelNames: ['operation'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'petstore_rate_limited_total',
      help: 'Requests refused with 429, by error code (rate_limited, api_key_banned)',
      labelNames: ['code'],
      registers: [registry],
    }),
    bans: new Counter({
      name: 'petstore_api_key_bans_total',
      help: 'Temporary bans started for keys that kept sending requests after a 429',
      registers: [registry],
    }),
    deprecatedCalls: new Counter({
      name: 'petstore_deprecated_operation_calls_total',
      // By plan, never by key: a label taking one value per key grows without bound. Which keys
      // call it is counted with each key (`petstore keys list`).
      help: 'Calls to deprecated operations by plan; keys list shows them per key',
      labelNames: ['operation', 'plan'],
      registers: [registry],
    }),
    connectionsRefused: new Counter({
      name: 'petstore_connections_refused_total',
      help: 'Connections closed at once for being over a cap (total: MAX_CONNECTIONS, per_address: MAX_CONNECTIONS_PER_ADDRESS)',
      labelNames: ['cap'],
      registers: [registry],
    }),
  };
}

/** The operationId of the matched route, else its path pattern, else `unmatched` (bounded labels). */
function operationOf(request: FastifyRequest): string {
  const options = request.routeOptions;
  const operationId = (options.schema as { operationId?: unknown } | undefined)?.operationId;
  if (typeof operationId === 'string') return operationId;
  return options.url ?? 'unmatched';
}

/**
 * Counts every answer and serves the registry at /metrics (Prometheus text format). The labelled
 * series are looked up once per label combination (there are few) and kept, so counting costs no
 * label hashing per request. It only counts: the per-key count of deprecated calls, which is
 * stored, is kept by the admission service (src/domain/admission), told of the operation called.
 */
export const metricsPlugin = fp<{ metrics: Metrics }>(
  async (app, { metrics }) => {
    const counters = new Map<string, { inc(): void }>();
    const timers = new Map<string, { observe(seconds: number): void }>();
    app.addHook('onResponse', (request, reply, done) => {
      const operation = operationOf(request);
      const series = `${operation} ${request.method} ${reply.statusCode}`;
      let counter = counters.get(series);
      if (counter === undefined) {
        counter = metrics.requests.labels(operation, request.method, String(reply.statusCode));
        counters.set(series, counter);
      }
      counter.inc();
      let timer = timers.get(operation);
      if (timer === undefined) {
        timer = metrics.duration.labels(operation);
        timers.set(operation, timer);
      }
      timer.observe(reply.elapsedTime / 1000);
      const deprecated = (request.routeOptions.schema as { deprecated?: unknown } | undefined)
        ?.deprecated;
      if (deprecated === true && request.apiKey !== undefined) {
        metrics.deprecatedCalls.inc({ operation, plan: request.apiKey.plan });
      }
      done();
    });
    app.get(OPERATIONS_ENDPOINTS.metrics, { schema: { hide: true } }, async (_request, reply) => {
      const text = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(text);
    });
  },
  { name: 'metrics' },
);
