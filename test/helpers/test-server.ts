import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type Config, loadConfig } from '../../src/config/config.js';
import type { Storage } from '../../src/domain/ports.js';
import type { Scope } from '../../src/domain/api-keys/scopes.js';
import type { Limits, Plan } from '../../src/domain/rate-limits/plans.js';
import { buildApp } from '../../src/http/apps/public/public-app.js';
import { createLogger } from '../../src/telemetry/logging/logger.js';
import { createServices, loggedAuditLog, type Services } from '../../src/services.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { createMetrics } from '../../src/telemetry/metrics.js';
import { startTracing } from '../../src/telemetry/tracing.js';
import { ownSharedBackends, type SharedBackendEnv } from './shared-backends.js';
import { TestClock } from './test-clock.js';

export interface TestServer {
  /** Base URL without trailing slash, e.g. http://127.0.0.1:41234 */
  url: string;
  app: FastifyInstance;
  /** The services the app was built with (the app's cache, admission, metrics). */
  services: Services;
  storage: Storage;
  clock: TestClock;
  config: Config;
  /** The SQLite file of a server started with `sqliteFile`. */
  databaseFile: string | undefined;
  /** Creates a fresh API key as the CLI would: through other services on the same database. */
  createKey(
    plan?: Plan,
    customLimits?: Limits,
    scopes?: readonly Scope[],
  ): Promise<{ id: string; key: string }>;
  revokeKey(id: string): Promise<void>;
  close(): Promise<void>;
}

export interface ServerOptions {
  /** Settings as environment variables; without DATABASE_URL the database is SQLite in memory. */
  env?: Record<string, string>;
  clock?: TestClock;
  logLines?: string[];
  /** The level of the logger writing into `logLines`: debug unless set. */
  logLevel?: string;
  /** Wraps the storage the app sees, e.g. to count reads; `storage` stays the real one. */
  wrapStorage?: (storage: Storage) => Storage;
  /**
   * On SQLite, a database file of its own (in a temporary folder removed on close) instead of
   * `:memory:`: writes then go through the commit worker, as in production.
   */
  sqliteFile?: boolean;
  /** Traces through the real SDK, as the OTEL_* variables of `env` configure them. */
  tracing?: boolean;
}

/**
 * The backends a test server uses when its test names none: PETSTORE_TEST_BACKEND=sqlite (the
 * default: SQLite in memory, counters in memory) or postgres (a schema of its own on the test
 * PostgreSQL, counters in the test Redis under a prefix of its own), so that every HTTP suite can
 * run on either: `PETSTORE_TEST_BACKEND=postgres npx vitest run test/http`.
 */
const backendAsked = () =>
  process.env.PETSTORE_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';
export const TEST_BACKEND = backendAsked();

/** Settings and clean-up for the scale-out backends, when PETSTORE_TEST_BACKEND asks for them. */
async function sharedBackends(
  env: Record<string, string> | undefined,
): Promise<{ env: Partial<SharedBackendEnv>; cleanUp(): Promise<void> }> {
  // Files share a worker's modules (vitest.config.ts): a worker that ran the other project's files
  // would hold the other backend here. vitest keeps a worker to one project; this says if not.
  if (backendAsked() !== TEST_BACKEND) {
    throw new Error(`PETSTORE_TEST_BACKEND asks for ${backendAsked()} now, ${TEST_BACKEND} before`);
  }
  if (TEST_BACKEND !== 'postgres' || env?.DATABASE_URL !== undefined) {
    return { env: {}, cleanUp: async () => undefined };
  }
  return ownSharedBackends();
}

/** A logger (debug unless `level` says) writing each line into `lines`, when the test collects them. */
export function logInto(
  lines: string[] | undefined,
  level = 'debug',
): { logger?: FastifyBaseLogger } {
  if (lines === undefined) return {};
  return {
    logger: createLogger({
      level,
      stream: { write: (line: string) => void lines.push(line) },
    }),
  };
}

export async function startServer(options: ServerOptions = {}): Promise<TestServer> {
  const clock = options.clock ?? new TestClock();
  const shared = await sharedBackends(options.env);
  const config = loadConfig({ PORT: '8080', ...shared.env, ...options.env });
  const ownFolder =
    config.database.kind === 'sqlite' && options.env?.DATABASE_URL === undefined
      ? options.sqliteFile === true
        ? mkdtempSync(join(tmpdir(), 'petstore-http-'))
        : ':memory:'
      : undefined;
  const databaseFile =
    ownFolder === undefined || ownFolder === ':memory:' ? undefined : join(ownFolder, 'pets.db');
  // The server's metrics, given to the storage opened here as the server's own would be.
  const metrics = createMetrics();
  const storage = await createStorage(
    ownFolder === undefined ? config.database : { kind: 'sqlite', path: databaseFile ?? ownFolder },
    // The test's clock dates a ban's lift too, as on a server given a clock (createServices).
    { migrate: true, observer: metrics.storage, time: 'caller' },
  ).catch(async (error: unknown) => {
    await shared.cleanUp().catch(() => undefined);
    throw error;
  });
  const logging = logInto(options.logLines, options.logLevel);
  const services = await createServices(config, {
    clock,
    storage: options.wrapStorage ? options.wrapStorage(storage) : storage,
    metrics,
    // The server's key audit lines (bans) into the same lines; its other service logs stay out.
    ...(logging.logger ? { auditLog: loggedAuditLog(logging.logger) } : {}),
  });
  const tracing =
    options.tracing === true
      ? await startTracing(config.tracing, { version: 'test', commit: 'test' })
      : undefined;
  const app = await buildApp({
    services,
    ...logging,
    ...(tracing ? { tracing } : {}),
  });
  // Keys are made the way the CLI makes them: by other services on the same database, so the
  // server learns of them from storage as it would in production.
  const cli = await createServices(config, { clock, storage });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    app,
    services,
    storage,
    clock,
    config,
    databaseFile,
    async createKey(plan = 'free', customLimits, scopes) {
      const { record, key } = await cli.apiKeys.create({
        plan,
        label: 'test',
        ...(customLimits ? { customLimits } : {}),
        ...(scopes ? { scopes } : {}),
      });
      return { id: record.id, key };
    },
    async revokeKey(id) {
      await cli.keys.revoke(id, { kind: 'cli', user: 'test', host: 'test' });
    },
    async close() {
      await app.close();
      await tracing?.shutdown();
      await services.close();
      await cli.close();
      await storage.close();
      await shared.cleanUp();
      if (databaseFile !== undefined)
        rmSync(join(databaseFile, '..'), { recursive: true, force: true });
    },
  };
}

/** Starts one server for the file, closed after it; each test still creates its own data. */
export function useServer(options: Parameters<typeof startServer>[0] = {}): () => TestServer {
  return useForFile(
    'server',
    () => startServer(options),
    (server) => server.close(),
  );
}

/** One `what` started before the file's tests and closed after them, if it started. */
export function useForFile<T>(
  what: string,
  start: () => Promise<T>,
  close: (started: T) => Promise<void>,
): () => T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  });
  afterAll(async () => {
    if (started !== undefined) await close(started);
  });
  return () => {
    if (started === undefined) throw new Error(`${what} not started`);
    return started;
  };
}

/** A small HTTP client that never throws on status: every test asserts the status itself. */
export async function call(
  server: TestServer,
  method: string,
  path: string,
  options: {
    key?: string;
    body?: unknown;
    /** Sent as is: bytes for bodies that are not valid UTF-8. */
    rawBody?: string | Uint8Array;
    headers?: Record<string, string>;
  } = {},
): Promise<{ status: number; headers: Headers; body: unknown; text: string }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let body: string | Uint8Array | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await send(server.url + path, method, headers, body);
  let parsed: unknown = undefined;
  try {
    parsed = response.text === '' ? undefined : JSON.parse(response.text);
  } catch {
    parsed = undefined;
  }
  return { ...response, body: parsed };
}

/** Connections kept between the calls of a file, as a client's would be. */
const agent = new http.Agent({ keepAlive: true });

/**
 * One request through node:http: fetch (undici) cost the test's side about twice the CPU per
 * request, and the suites send tens of thousands of them.
 */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
): Promise<{ status: number; headers: Headers; text: string }> {
  const length = body === undefined ? undefined : Buffer.byteLength(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method,
        agent,
        headers: length === undefined ? headers : { ...headers, 'content-length': String(length) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const received = new Headers();
          const raw = response.rawHeaders;
          for (let i = 0; i + 1 < raw.length; i += 2) {
            received.append(raw[i] as string, raw[i + 1] as string);
          }
          resolve({
            status: response.statusCode ?? 0,
            headers: received,
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
