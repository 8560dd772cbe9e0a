import fp from 'fastify-plugin';
import type { Metrics } from '../../telemetry/metrics.js';
import { routeInfo } from '../route-info.js';

/**
 * Counts every answer of the listener, by operation (operationId, else the route's pattern, else
 * `unmatched`), method and status, and its duration by operation. It only counts: the per-key
 * count of deprecated calls, which is stored, is kept by the admission service
 * (src/domain/admission), told of the operation called. /metrics is served by registerMetrics, on
 * the listener the configuration names.
 */
export const metricsPlugin = fp<{ metrics: Metrics }>(
  async (app, { metrics }) => {
    const { requests, duration, deprecatedCalls } = metrics;
    app.addHook('onResponse', (request, reply, done) => {
      const { operation, deprecated } = routeInfo(request);
      requests.cell(operation, request.method, String(reply.statusCode)).value += 1;
      duration.observe(duration.cell(operation), reply.elapsedTime / 1000);
      if (deprecated && request.apiKey !== undefined) {
        deprecatedCalls.cell(operation, request.apiKey.plan).value += 1;
      }
      done();
    });
  },
  { name: 'metrics' },
);
