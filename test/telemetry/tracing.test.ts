import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { postgresFor, usePostgresSchemas } from '../helpers/postgres.js';
import { adminClient, deleteKeysWithPrefix } from '../helpers/redis.js';
import {
  createKey,
  type ServerProcess,
  spawnServer,
  tempDatabaseUrl,
} from '../helpers/server-process.js';
import { requireService, serviceUrl } from '../helpers/services.js';
import { OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

/*
 * The built server as a process, its spans sent to a small OTLP receiver in the test (OTLP/HTTP
 * with JSON bodies). Spans are read after a SIGTERM, so every test also shows that the spans still
 * buffered are sent on the way out.
 */
const LOADED_MODULES_HOOK = new URL('./loaded-modules.mjs', import.meta.url).pathname;
const SERVER_SPAN = 2;
const CLIENT_SPAN = 3;

function traceparent(): { header: string; traceId: string; parentId: string } {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { header: `00-${traceId}-${parentId}-01`, traceId, parentId };
}

interface Started {
  server: ServerProcess;
  /** The modules the process loaded, known once it exited. */
  loadedModules(): string[];
}

const running: ServerProcess[] = [];
const receivers: OtlpReceiver[] = [];

/** The server with the module-recording hook; the environment is all it gets besides PORT. */
async function start(env: Record<string, string>): Promise<Started> {
  const list = join(mkdtempSync(join(tmpdir(), 'petstore-modules-')), 'loaded.txt');
  const server = await spawnServer({
    NODE_OPTIONS: `--import=${LOADED_MODULES_HOOK}`,
    PETSTORE_TEST_LOADED_MODULES: list,
    ...env,
  });
  running.push(server);
  return { server, loadedModules: () => readFileSync(list, 'utf8').split('\n') };
}

async function stop(server: ServerProcess): Promise<void> {
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
}

async function receiver(): Promise<OtlpReceiver> {
  const started = await OtlpReceiver.start();
  receivers.push(started);
  return started;
}

const tracingOn = (endpoint: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  // 0% of the traces this service starts, and every trace a caller sampled (parent-based).
  OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
  OTEL_TRACES_SAMPLER_ARG: '0',
});

function send(
  server: ServerProcess,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
}

/** The @opentelemetry packages of these module URLs, but the API, which prom-client loads. */
function loadedOtelPackages(urls: string[]): string[] {
  const packages = urls.map((url) => /\/node_modules\/@opentelemetry\/([^/]+)\//.exec(url)?.[1]);
  return [
    ...new Set(packages.filter((name): name is string => name !== undefined && name !== 'api')),
  ];
}

/** A POST whose body comes a while after its headers, in events of the socket of its own. */
function postLate(server: ServerProcess, key: string, header: string, body: unknown) {
  return new Promise<number>((resolve, reject) => {
    const text = JSON.stringify(body);
    const sent = httpRequest(`${server.url}/v1/pets`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(text)),
        traceparent: header,
      },
    });
    sent.once('error', reject);
    sent.once('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    sent.flushHeaders();
    setTimeout(() => sent.end(text), 300);
  });
}

const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) =>
  spans.filter((s) => s.parentSpanId === parent.spanId && s.traceId === parent.traceId);

const logLines = (server: ServerProcess) =>
  server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

afterEach(() => {
  for (const server of running.splice(0)) server.child.kill('SIGKILL');
});
afterAll(async () => {
  for (const open of receivers.splice(0)) await open.close();
});

describe('tracing on SQLite', () => {
  it('continues a traceparent with a server span named by route template, a storage child span, and the trace id in the request line', async () => {
    const collector = await receiver();
    const databaseUrl = tempDatabaseUrl();
    const key = await createKey(databaseUrl);
    const { server, loadedModules } = await start({
      DATABASE_URL: databaseUrl,
      ...tracingOn(collector.endpoint),
    });
    const create = traceparent();
    const created = await send(server, 'POST', '/v1/pets', {
      key,
      body: { name: 'Traced', categoryId: 1 },
      headers: { traceparent: create.header },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    const late = traceparent();
    expect(await postLate(server, key, late.header, { name: 'Late', categoryId: 2 })).toBe(201);
    const read = traceparent();
    expect(
      (await send(server, 'GET', `/v1/pets/${id}`, { key, headers: { traceparent: read.header } }))
        .status,
    ).toBe(200);
    const unmatched = traceparent();
    expect(
      (await send(server, 'GET', '/nowhere/at-all', { headers: { traceparent: unmatched.header } }))
        .status,
    ).toBe(404);
    // Not sampled: no traceparent, and the service samples 0% of the traces it starts.
    expect((await send(server, 'GET', '/v1/pets?limit=1', { key })).status).toBe(200);
    await stop(server);

    const spans = collector.spans;
    const post = spans.find((s) => s.traceId === create.traceId && s.kind === SERVER_SPAN);
    expect(post).toMatchObject({
      name: 'POST /v1/pets',
      parentSpanId: create.parentId,
      attributes: {
        'http.request.method': 'POST',
        'http.route': '/v1/pets',
        'http.response.status_code': 201,
        'petstore.api_key.id': expect.stringMatching(/^key_/),
      },
    });
    expect(childrenOf(spans, post as ReceivedSpan)).toContainEqual(
      expect.objectContaining({
        name: 'petstore.storage create',
        kind: CLIENT_SPAN,
        attributes: expect.objectContaining({ 'db.system.name': 'sqlite', 'db.system': 'sqlite' }),
      }),
    );
    // The body came in later events of the socket: its work is still the request's child.
    const latePost = spans.find((s) => s.traceId === late.traceId && s.kind === SERVER_SPAN);
    expect(childrenOf(spans, latePost as ReceivedSpan).map((s) => s.name)).toEqual([
      'petstore.storage create',
    ]);
    const get = spans.find((s) => s.traceId === read.traceId && s.kind === SERVER_SPAN);
    expect(get?.name).toBe('GET /v1/pets/{petId}');
    expect(get?.attributes['http.route']).toBe('/v1/pets/{petId}');
    const lost = spans.find((s) => s.traceId === unmatched.traceId);
    expect(lost?.name).toBe('GET');
    expect(lost?.attributes['http.route']).toBeUndefined();
    expect(lost?.attributes['http.response.status_code']).toBe(404);
    // Only the four sampled requests were traced; no span names a raw path.
    expect(spans.filter((s) => s.kind === SERVER_SPAN)).toHaveLength(4);
    expect(spans.map((s) => s.name).join(' ')).not.toContain(`/v1/pets/${id}`);

    const lines = logLines(server);
    expect(lines[0]).toMatchObject({ version: expect.any(String), commit: expect.any(String) });
    const requestLine = lines.find((l) => l.msg === 'request completed' && l.route === '/v1/pets');
    expect(requestLine).toMatchObject({ traceId: create.traceId, status: 201, method: 'POST' });
    // An unsampled request's line still carries its trace id.
    const unsampled = lines.find(
      (l) => l.msg === 'request completed' && l.route === '/v1/pets' && l.method === 'GET',
    );
    expect(unsampled?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(loadedOtelPackages(loadedModules())).toEqual(
      expect.arrayContaining(['sdk-trace', 'core', 'exporter-trace-otlp-http']),
    );
  }, 120_000);

  it('puts no key, secret or pet name in any span attribute or log line', async () => {
    const collector = await receiver();
    const databaseUrl = tempDatabaseUrl();
    const key = await createKey(databaseUrl);
    const { server } = await start({ DATABASE_URL: databaseUrl, ...tracingOn(collector.endpoint) });
    const petName = `Secret-Pet-${randomUUID()}`;
    const secret = `s3cr3t-${randomUUID()}`;
    const forged = `pa_live_${'Z'.repeat(36)}`;
    const headers = (extra: Record<string, string> = {}) => ({
      traceparent: traceparent().header,
      cookie: `session=${secret}`,
      'x-api-key': key,
      ...extra,
    });
    const created = await send(server, 'POST', `/v1/pets?api_key=${key}&token=${secret}`, {
      key,
      body: { name: petName, categoryId: 7 },
      headers: headers({ 'idempotency-key': secret }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    await send(server, 'GET', `/v1/pets/${id}?access_token=${key}`, { key, headers: headers() });
    await send(server, 'GET', `/v1/pets?status=available&secret=${secret}`, {
      key,
      headers: headers(),
    });
    await send(server, 'GET', `/v1/${key}/nothing-here`, {
      key,
      headers: headers(),
    });
    await send(server, 'GET', '/v1/pets', { key: forged, headers: headers() });
    await send(server, 'POST', '/v1/pets', {
      key,
      body: { name: petName, categoryId: 'not a number' },
      headers: headers(),
    });
    await stop(server);

    expect(collector.spans.length).toBeGreaterThanOrEqual(6);
    const attributes = JSON.stringify(collector.spans.map((s) => [s.name, s.attributes]));
    const everything = `${collector.bodies.join('\n')}\n${server.output()}`;
    for (const text of [attributes, everything]) {
      for (const banned of [key, key.slice(8), forged.slice(8), petName, secret]) {
        expect(text).not.toContain(banned);
      }
    }
  }, 120_000);
});

const PG_SUITE = 'tracing on PostgreSQL and Redis';
const sharedBackends = (await postgresFor(PG_SUITE)) && (await requireService('redis', PG_SUITE));

describe.runIf(sharedBackends)(PG_SUITE, () => {
  const schemas = usePostgresSchemas();
  const prefix = `test:${randomUUID()}:`;
  afterAll(async () => {
    const redis = adminClient();
    await redis.connect();
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  });

  it('gives a request a storage span on PostgreSQL and a Redis span for the rate-limit script', async () => {
    const collector = await receiver();
    const key = await createKey(schemas.url);
    const { server } = await start({
      DATABASE_URL: schemas.url,
      REDIS_URL: serviceUrl.redis,
      REDIS_KEY_PREFIX: prefix,
      ...tracingOn(collector.endpoint),
    });
    const create = traceparent();
    const created = await send(server, 'POST', '/v1/pets', {
      key,
      body: { name: 'Traced on PostgreSQL', categoryId: 1 },
      headers: { traceparent: create.header },
    });
    expect(created.status).toBe(201);
    await stop(server);

    const post = collector.spans.find(
      (s) => s.traceId === create.traceId && s.kind === SERVER_SPAN,
    );
    expect(post?.name).toBe('POST /v1/pets');
    const children = childrenOf(collector.spans, post as ReceivedSpan);
    expect(children).toContainEqual(
      expect.objectContaining({
        name: 'petstore.storage create',
        attributes: expect.objectContaining({ 'db.system.name': 'postgresql' }),
      }),
    );
    expect(children).toContainEqual(
      expect.objectContaining({
        name: 'petstore.redis consume',
        kind: CLIENT_SPAN,
        attributes: expect.objectContaining({ 'db.system.name': 'redis' }),
      }),
    );
  }, 120_000);
});

describe('tracing off', () => {
  it('loads no OpenTelemetry module without the OTEL_* variables, and sends nothing when the exporter is none', async () => {
    const collector = await receiver();
    const settings: Record<string, string>[] = [
      {},
      { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_TRACES_EXPORTER: 'none' },
      { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_SDK_DISABLED: 'true' },
    ];
    for (const env of settings) {
      const databaseUrl = tempDatabaseUrl();
      const key = await createKey(databaseUrl);
      const { server, loadedModules } = await start({ DATABASE_URL: databaseUrl, ...env });
      const response = await send(server, 'POST', '/v1/pets', {
        key,
        body: { name: 'Untraced', categoryId: 1 },
        headers: { traceparent: traceparent().header },
      });
      expect(response.status).toBe(201);
      await stop(server);
      const modules = loadedModules();
      // The hook saw the process's own modules, so an empty answer below is not a broken hook.
      expect(modules.some((url) => url.endsWith('/dist/main.js'))).toBe(true);
      // prom-client requires the OpenTelemetry API (a no-op facade until an SDK registers) for
      // its exemplars whatever we do; no package of the SDK is loaded.
      expect(loadedOtelPackages(modules)).toEqual([]);
      // Nor Node's bundled undici (fetch, WebSocket): an ESM import of node:http loads it, 4% of a
      // start (src/http/server/node-http.ts).
      expect(modules).not.toContain('node:internal/deps/undici');
      const line = logLines(server).find((l) => l.msg === 'request completed');
      expect(line?.traceId).toBeUndefined();
    }
    expect(collector.requests).toEqual([]);
  }, 180_000);
});
