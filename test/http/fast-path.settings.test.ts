import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OtlpReceiver } from '../telemetry/otlp-receiver.js';
import { call, type TestServer, useServer } from '../helpers/test-server.js';

/**
 * The fast path stays on with the settings production turns on: tracing (a request it answers
 * still gets its server span) and CORS (a request without Origin is answered in front of Fastify,
 * with the CORS headers every answer carries then; one with Origin goes to @fastify/cors).
 */

/** Counts the requests the routes answer (they ask the cache through page() and pet()). */
function routeCalls(s: TestServer): { count: () => number; restore: () => void } {
  const page = vi.spyOn(s.services.cache, 'page');
  const pet = vi.spyOn(s.services.cache, 'pet');
  return {
    count: () => page.mock.calls.length + pet.mock.calls.length,
    restore: () => {
      page.mockRestore();
      pet.mockRestore();
    },
  };
}

async function createPet(server: TestServer, key: string): Promise<number> {
  const res = await call(server, 'POST', '/v1/pets', {
    key,
    body: { name: 'Settings', categoryId: 4, status: 'pending' },
  });
  expect(res.status).toBe(201);
  return (res.body as { id: number }).id;
}

/** Headers that differ between any two answers: the request id, the date, the counts left. */
const VOLATILE = new Set(['x-request-id', 'date', 'x-ratelimit-remaining', 'ratelimit']);
const steady = (headers: Headers) => [...headers].filter(([name]) => !VOLATILE.has(name));

let collector: OtlpReceiver;
// The exporter and its batch processor read their settings from the environment themselves.
beforeAll(async () => {
  collector = await OtlpReceiver.start();
  vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', collector.endpoint);
  vi.stubEnv('OTEL_BSP_SCHEDULE_DELAY', '10');
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await collector.close();
});

describe('the fast path with tracing on', () => {
  const server = useServer({
    tracing: true,
    logLevel: 'info',
    logLines: [],
    env: {
      // The service's own settings; the exporter's endpoint is stubbed above.
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    },
  });

  it('answers a cached pet in front of Fastify, and the request still gets its server span', async () => {
    await server().services.cache.start();
    const { key } = await server().createKey('pro');
    const id = await createPet(server(), key);
    const first = await call(server(), 'GET', `/v1/pets/${id}`, { key }); // the route caches it
    const routes = routeCalls(server());
    const traceId = randomBytes(16).toString('hex');
    const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
    const second = await call(server(), 'GET', `/v1/pets/${id}`, {
      key,
      headers: { traceparent },
    });
    expect(routes.count()).toBe(0);
    routes.restore();
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(steady(second.headers)).toEqual(steady(first.headers));
    const span = await collector.waitForSpan((s) => s.traceId === traceId && s.kind === 2);
    expect(span).toMatchObject({
      name: 'GET /v1/pets/{petId}',
      attributes: { 'http.route': '/v1/pets/{petId}', 'http.response.status_code': 200 },
    });
  });
});

describe('the fast path with CORS on', () => {
  const origin = 'https://shelter.example';
  const server = useServer({ logLevel: 'info', logLines: [], env: { CORS_ORIGINS: origin } });

  it('answers a request without Origin in front of Fastify, as the route answers it', async () => {
    await server().services.cache.start();
    const { key } = await server().createKey('pro');
    const id = await createPet(server(), key);
    const byRoute = await call(server(), 'GET', `/v1/pets/${id}`, { key });
    const routes = routeCalls(server());
    const byFastPath = await call(server(), 'GET', `/v1/pets/${id}`, { key });
    expect(routes.count()).toBe(0);
    routes.restore();
    expect(byFastPath.headers.get('vary')).toBe('Origin, Accept-Encoding');
    expect(steady(byFastPath.headers)).toEqual(steady(byRoute.headers));
    expect(byFastPath.text).toBe(byRoute.text);
  });

  it('leaves a request with Origin to the route, which gives it the CORS headers', async () => {
    const { key } = await server().createKey('pro');
    const id = await createPet(server(), key);
    await call(server(), 'GET', `/v1/pets/${id}`, { key }); // cached
    const routes = routeCalls(server());
    const res = await call(server(), 'GET', `/v1/pets/${id}`, { key, headers: { origin } });
    expect(routes.count()).toBe(1);
    routes.restore();
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(origin);
  });
});
