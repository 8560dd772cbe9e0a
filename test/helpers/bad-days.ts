import { type ChildProcess, spawn } from 'node:child_process';
import { expect } from 'vitest';
import { createKey } from '../cli/cli-harness.js';
import { type SentCreate, sendCreate, UNLIMITED_KEY_ARGS } from './pet-traffic.js';
import { REPO_ROOT, spawnServer, type ServerProcess } from './server-process.js';

/**
 * Helpers for the bad-day tests (test/process/bad-days.*.test.ts): a fault outside the server
 * process, creates sent through it, and probes of /healthz and /readyz all along.
 */

/** How a refused create must be answered, and within what (REQUEST_TIMEOUT_MS of these tests). */
export const REQUEST_TIMEOUT_MS = 8_000;

export interface Probe {
  at: number;
  ms: number;
  status: number | 'error';
}

/** /healthz and /readyz asked every `everyMs` until stopped; what each answered and how fast. */
export function probeHealth(url: string, everyMs = 200) {
  const health: Probe[] = [];
  const ready: Probe[] = [];
  let stopped = false;
  const ask = async (path: string, into: Probe[]) => {
    while (!stopped) {
      const started = performance.now();
      const at = Date.now();
      let status: Probe['status'] = 'error';
      try {
        const res = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(10_000) });
        await res.text();
        status = res.status;
      } catch {
        // Recorded as 'error'.
      }
      into.push({ at, ms: performance.now() - started, status });
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  };
  const running = Promise.all([ask('/healthz', health), ask('/readyz', ready)]);
  return {
    health,
    ready,
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/** A server on `database` with a key without limits; the key is made by the CLI before it starts. */
export async function startServer(
  database: string,
  env: Record<string, string> = {},
): Promise<{ server: ServerProcess; key: string }> {
  const { key } = await createKey(database, UNLIMITED_KEY_ARGS);
  const server = await spawnServer({
    DATABASE_URL: database,
    HEADERS_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    ...env,
  });
  return { server, key };
}

let sequence = 0;

/** One create with a unique name (and Idempotency-Key), answered or failed. */
export async function create(url: string, key: string, prefix: string): Promise<AnsweredCreate> {
  sequence += 1;
  const name = `${prefix} ${process.pid}-${sequence}`;
  const sent: AnsweredCreate = {
    name,
    body: JSON.stringify({ name, categoryId: sequence, status: 'available' }),
    idempotencyKey: `${prefix}-${process.pid}-${sequence}`,
  };
  await sendCreate(url, key, sent, 20_000);
  return sent;
}

/** A create sent by `create`: with its Retry-After and the error code of a refusal. */
export type AnsweredCreate = SentCreate;

export { sendCreate };

/**
 * Another process holding SQLite's write lock (`BEGIN IMMEDIATE`) on `path` for `holdMs`, as a
 * CLI command or a script beside the server may. Resolves once the lock is taken; `released`
 * resolves when the process let it go and exited.
 */
export async function holdWriteLock(
  path: string,
  holdMs: number,
): Promise<{ child: ChildProcess; released: Promise<void> }> {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(${JSON.stringify(path)});
    db.pragma('busy_timeout = 5000');
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${holdMs});
    db.exec('ROLLBACK');
    db.close();
  `;
  const child = spawn(process.execPath, ['-e', script], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const released = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('locked')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the lock holder exited (${code})`)));
  });
  return { child, released };
}

/** Each create answered in time: 201, or 503 `unavailable` with Retry-After; never a 500. */
export function expectRefusedAsOutage(sent: readonly AnsweredCreate[]): void {
  for (const one of sent) {
    expect(one.error).toBeUndefined();
    expect([201, 503]).toContain(one.status);
    expect(one.ms).toBeLessThan(REQUEST_TIMEOUT_MS);
    if (one.status === 503) {
      expect(one.code).toBe('unavailable');
      expect(Number(one.retryAfter)).toBeGreaterThan(0);
    }
  }
}

/** Every create answered 201 among `sent` is listed by the server: nothing acknowledged is lost. */
export async function expectAcknowledgedKept(
  url: string,
  key: string,
  sent: readonly AnsweredCreate[],
): Promise<void> {
  const names = await listedNames(url, key);
  for (const one of sent.filter((c) => c.status === 201)) {
    expect(names.has(one.name)).toBe(true);
  }
}

/** Every pet the server lists, by name, walking all pages. */
export async function listedNames(url: string, key: string): Promise<Set<string>> {
  const names = new Set<string>();
  let next: string | undefined = `${url}/v1/pets?limit=100`;
  while (next !== undefined) {
    const res = await fetch(next, { headers: { authorization: `Bearer ${key}` } });
    const page = (await res.json()) as Array<{ name: string }>;
    for (const pet of page) names.add(pet.name);
    const link = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
    next = link === undefined ? undefined : new URL(link, url).toString();
  }
  return names;
}

/** Waits until /readyz answers `status`, or fails after `timeoutMs`. */
export async function untilReady(url: string, status: number, timeoutMs = 15_000): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) }).catch(
      () => undefined,
    );
    if (res?.status === status) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`/readyz did not answer ${status} within ${timeoutMs} ms`);
}
