import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { type Config, loadConfig } from '../../src/config/config.js';
import { ApiKeyService } from '../../src/domain/api-keys/api-key-service.js';
import type { Clock } from '../../src/domain/clock.js';
import type { Storage } from '../../src/domain/ports.js';
import type { Limits, Plan } from '../../src/domain/rate-limits/plans.js';
import { buildApp } from '../../src/http/build-app.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { TestClock } from './test-clock.js';

export interface TestServer {
  /** Base URL without trailing slash, e.g. http://127.0.0.1:41234 */
  url: string;
  app: FastifyInstance;
  storage: Storage;
  clock: TestClock;
  config: Config;
  /** Creates a fresh API key through the same service the CLI uses. */
  createKey(plan?: Plan, customLimits?: Limits): Promise<{ id: string; key: string }>;
  revokeKey(id: string): Promise<void>;
  close(): Promise<void>;
}

export interface ServerOptions {
  /** Settings as environment variables; without DATABASE_URL the database is SQLite in memory. */
  env?: Record<string, string>;
  clock?: TestClock;
  logLines?: string[];
  /** Wraps the storage the app sees, e.g. to count reads; `storage` stays the real one. */
  wrapStorage?: (storage: Storage) => Storage;
}

export async function startServer(options: ServerOptions = {}): Promise<TestServer> {
  const clock = options.clock ?? new TestClock();
  const probe = loadConfig({ PORT: '8080', ...options.env });
  const storage = await createStorage(
    options.env?.DATABASE_URL === undefined ? { kind: 'sqlite', path: ':memory:' } : probe.database,
    { migrate: true },
  );
  const app = await buildApp({
    config: probe,
    storage: options.wrapStorage ? options.wrapStorage(storage) : storage,
    clock: clock as Clock,
    ...(options.logLines
      ? {
          log: {
            level: 'info',
            stream: { write: (line: string) => void options.logLines?.push(line) },
          },
        }
      : {}),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const keys = new ApiKeyService(storage.apiKeys, clock, probe.environment);
  return {
    url,
    app,
    storage,
    clock,
    config: probe,
    async createKey(plan = 'free', customLimits) {
      const { record, key } = await keys.create({
        plan,
        label: 'test',
        ...(customLimits ? { customLimits } : {}),
      });
      return { id: record.id, key };
    },
    async revokeKey(id) {
      await keys.revoke(id);
    },
    async close() {
      await app.close();
      await storage.close();
    },
  };
}

/** Starts one server for the file, closed after it; each test still creates its own data. */
export function useServer(options: Parameters<typeof startServer>[0] = {}): () => TestServer {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startServer(options);
  });
  afterAll(async () => {
    await server?.close();
  });
  return () => {
    if (!server) throw new Error('server not started');
    return server;
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
    rawBody?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<{ status: number; headers: Headers; body: unknown; text: string }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(server.url + path, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}
