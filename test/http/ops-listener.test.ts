import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_COMMIT, BUILD_VERSION } from '../../src/build-info.js';
import { loadConfig } from '../../src/config/config.js';
import { buildApp } from '../../src/http/apps/public/public-app.js';
import { ApiServer } from '../../src/http/server/api-server.js';
import { buildOpsApp } from '../../src/http/apps/ops/ops-app.js';
import { createServices, type Services } from '../../src/services.js';
import { sample, scrapeAt } from '../helpers/prometheus-text.js';
import { ownSharedBackends } from '../helpers/shared-backends.js';
import { TEST_BACKEND } from '../helpers/test-server.js';

interface Listeners {
  services: Services;
  app: FastifyInstance;
  ops: FastifyInstance;
  publicUrl: string;
  opsUrl: string;
  cleanUp(): Promise<void>;
}

/** What /readyz names on the backends of this run (PETSTORE_TEST_BACKEND). */
const READY =
  TEST_BACKEND === 'postgres'
    ? { status: 'ready', database: 'postgres', redis: 'redis' }
    : { status: 'ready', database: 'sqlite' };

/** The public and the operations listener, wired as src/main.ts wires them. */
async function startListeners(env: Record<string, string>): Promise<Listeners> {
  const shared = TEST_BACKEND === 'postgres' ? await ownSharedBackends() : undefined;
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', ...shared?.env, ...env });
  const services = await createServices(config, { migrate: true });
  const app = await buildApp({ services });
  const ops = await buildOpsApp({
    services,
    draining: () => app.server instanceof ApiServer && app.server.draining,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  await ops.listen({ port: 0, host: '127.0.0.1' });
  const url = (listener: FastifyInstance) =>
    `http://127.0.0.1:${(listener.server.address() as AddressInfo).port}`;
  const cleanUp = async () => shared?.cleanUp();
  return { services, app, ops, publicUrl: url(app), opsUrl: url(ops), cleanUp };
}

async function stop(listeners: Listeners | undefined): Promise<void> {
  if (listeners === undefined) return;
  await listeners.ops.close();
  await listeners.app.close();
  await listeners.services.close();
  await listeners.cleanUp();
}

describe('the operations listener (OPS_PORT)', () => {
  let l: Listeners | undefined;
  const listeners = () => l as Listeners;
  beforeAll(async () => {
    // Any port other than PORT: the listeners below take free ones.
    l = await startListeners({ OPS_PORT: '9100' });
  });
  afterAll(() => stop(l));

  it('serves /healthz with the build, /version, /readyz and /metrics', async () => {
    const { opsUrl } = listeners();
    const build = { version: BUILD_VERSION, commit: BUILD_COMMIT, node: process.version };
    expect(BUILD_COMMIT).toMatch(/^[0-9a-f]{40}$/);
    const health = await fetch(`${opsUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', ...build });
    expect(await (await fetch(`${opsUrl}/version`)).json()).toEqual(build);
    const ready = await fetch(`${opsUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual(READY);
    const text = await scrapeAt(opsUrl);
    expect(text).toMatch(/^petstore_process_resident_memory_bytes \d+/m);
    expect(sample(text, 'petstore_ready')).toBe(1);
  });

  it('reports the public listener’s traffic, and serves nothing else', async () => {
    const { opsUrl, publicUrl } = listeners();
    const healthz = { operation: '/healthz', method: 'GET', status: '200' };
    const before = sample(await scrapeAt(opsUrl), 'petstore_http_requests_total', healthz);
    expect((await fetch(`${publicUrl}/healthz`)).status).toBe(200);
    expect(sample(await scrapeAt(opsUrl), 'petstore_http_requests_total', healthz)).toBe(
      before + 1,
    );
    for (const path of ['/v1/pets', '/docs', '/v1/openapi.json', '/admin/v1/keys', '/']) {
      const res = await fetch(`${opsUrl}${path}`);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { code: string }).code).toBe('not_found');
    }
    const post = await fetch(`${opsUrl}/metrics`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('takes /metrics off the public listener, which keeps /healthz and /readyz', async () => {
    const { publicUrl } = listeners();
    const res = await fetch(`${publicUrl}/metrics`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { code: string }).code).toBe('not_found');
    const health = await fetch(`${publicUrl}/healthz`);
    // The public one tells the version only, as before.
    expect(await health.json()).toEqual({ status: 'ok', version: BUILD_VERSION });
    expect((await fetch(`${publicUrl}/readyz`)).status).toBe(200);
  });

  // Last: the public listener stays draining.
  it('answers /readyz 503 while the public listener drains, and says so in petstore_ready', async () => {
    const { app, opsUrl } = listeners();
    (app.server as ApiServer).drain();
    const ready = await fetch(`${opsUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).not.toBeNull();
    expect(await scrapeAt(opsUrl)).toMatch(/^petstore_ready 0$/m);
  });
});

describe('DOCS=off', () => {
  let l: Listeners | undefined;
  beforeAll(async () => {
    l = await startListeners({ DOCS: 'off' });
  });
  afterAll(() => stop(l));

  it('serves no /docs page nor its assets; the OpenAPI document stays', async () => {
    const { publicUrl } = l as Listeners;
    for (const path of ['/docs', '/docs/', '/docs/json', '/docs/static/index.html']) {
      const res = await fetch(`${publicUrl}${path}`);
      expect(res.status, path).toBe(404);
    }
    const document = await fetch(`${publicUrl}/v1/openapi.json`);
    expect(document.status).toBe(200);
    expect(((await document.json()) as { openapi: string }).openapi).toMatch(/^3\./);
    // Without OPS_PORT, /metrics stays on the public listener.
    expect((await fetch(`${publicUrl}/metrics`)).status).toBe(200);
  });

  it('serves /docs by default', async () => {
    const other = await startListeners({});
    try {
      expect((await fetch(`${other.publicUrl}/docs/static/index.html`)).status).toBe(200);
    } finally {
      await stop(other);
    }
  });
});
