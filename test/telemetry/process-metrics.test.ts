import { createRequire } from 'node:module';
import type * as PerfHooks from 'node:perf_hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { collectProcessMetrics, createMetrics } from '../../src/telemetry/metrics.js';

// prom-client reads perf_hooks through require: the spy goes on that same module object.
const perfHooks = createRequire(import.meta.url)('node:perf_hooks') as typeof PerfHooks;

describe('process metrics', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('are shown by every app of a process, made once: one event loop monitor however many apps', async () => {
    const monitors = vi.spyOn(perfHooks, 'monitorEventLoopDelay');
    const apps = [createMetrics(), createMetrics(), createMetrics()];
    for (const metrics of apps) collectProcessMetrics(metrics);
    // Once per process (an earlier file in this worker may have made them already: then none).
    expect(monitors.mock.calls.length).toBeLessThanOrEqual(1);
    for (const metrics of apps) {
      const text = await metrics.registry.metrics();
      expect(text).toContain('petstore_process_cpu_user_seconds_total');
      expect(text).toContain('petstore_nodejs_eventloop_lag_seconds');
      expect(text).toContain('petstore_http_requests_total');
    }
  });
});
