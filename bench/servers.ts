/**
 * The processes under test and their storage: a temporary SQLite file, or a fresh PostgreSQL schema
 * and a Redis key prefix of their own; the seeded pets and the benchmark's key (through the
 * service's own CLI); the service (`node dist/main.js`, configured by its environment only) and
 * the baseline server.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Sqlite from 'better-sqlite3';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { BaselineConfig } from './baseline-server.js';
import { type Cores, onCores } from './cores.js';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The built service of a checkout (this one unless --checkout names another): its CLI and server. */
const cliOf = (checkout: string) => join(checkout, 'dist/cli/main.js');
const serviceOf = (checkout: string) => join(checkout, 'dist/main.js');
const BASELINE = fileURLToPath(new URL('./baseline-server.js', import.meta.url));
/** The seed command's largest --count. */
const SEED_BATCH = 1_000_000;

export const POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = 'redis://127.0.0.1:6379';
/** The benchmark key's limits: far above any load this machine can send. */
export const KEY_LIMITS = { perMinute: 1_000_000_000, perDay: 1_000_000_000 } as const;

type Env = Record<string, string>;

/** Where the service keeps its data for one benchmark run, and how to remove it afterwards. */
export interface Storage {
  readonly description: string;
  /** DATABASE_URL, and for PostgreSQL also REDIS_URL and REDIS_KEY_PREFIX. */
  readonly env: Env;
  /** PostgreSQL: the application_name the service's connections carry, to find its backends. */
  readonly applicationName?: string;
  /** After seeding: what the database would have done on its own by the time a real service runs. */
  quiesce(): Promise<void>;
  /**
   * Runs one SQL statement that both SQLite and PostgreSQL read alike, from outside the service (the
   * soak counts rows with it); resolves the first column of the first row, if any, as a number.
   */
  query(text: string): Promise<number | undefined>;
  drop(): Promise<void>;
}

function firstNumber(row: Record<string, unknown> | undefined): number | undefined {
  const value = row === undefined ? undefined : Object.values(row)[0];
  return value === undefined || value === null ? undefined : Number(value);
}

export function sqliteStorage(dir: string): Storage {
  const path = join(dir, 'bench.db');
  let db: Sqlite.Database | undefined;
  return {
    description: `SQLite, ${path}`,
    env: { DATABASE_URL: `sqlite:${path}` },
    quiesce: async () => undefined,
    async query(text) {
      // A connection of our own, as a second process would have: WAL lets it read while the
      // service writes, and waits for the service's write lock rather than failing.
      db ??= new Sqlite(path, { timeout: 5_000 });
      const statement = db.prepare(text);
      if (!statement.reader) {
        statement.run();
        return undefined;
      }
      return firstNumber(statement.get() as Record<string, unknown> | undefined);
    },
    async drop() {
      db?.close(); // the file goes with the temporary folder
    },
  };
}

/** A new schema on the local PostgreSQL, and a Redis key prefix no one else uses. */
export async function postgresStorage(): Promise<Storage> {
  const tag = `bench_${randomBytes(5).toString('hex')}`;
  const schema = pg.escapeIdentifier(tag);
  const admin = async (statement: (client: pg.Client) => Promise<unknown>) => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await statement(client);
    } finally {
      await client.end();
    }
  };
  await admin((client) => client.query(`CREATE SCHEMA ${schema}`));
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('options', `-c search_path=${tag}`);
  // Marks the service's backends in pg_stat_activity, so the bench reads their CPU and no one else's.
  url.searchParams.set('application_name', tag);
  const keyPrefix = `${tag}:`;
  return {
    description: `PostgreSQL ${POSTGRES_URL} schema ${tag}, Redis ${REDIS_URL} prefix ${keyPrefix}`,
    env: { DATABASE_URL: url.toString(), REDIS_URL, REDIS_KEY_PREFIX: keyPrefix },
    applicationName: tag,
    // Statistics for the planner, as autovacuum would gather them within minutes: right after a
    // bulk seed there are none, and PostgreSQL plans list-status as a scan of every matching row
    // followed by a sort (bench/README.md, "Findings").
    async quiesce() {
      await admin(async (client) => {
        const { rows } = await client.query<{ tablename: string }>(
          'SELECT tablename FROM pg_tables WHERE schemaname = $1',
          [tag],
        );
        for (const { tablename } of rows) {
          await client.query(`ANALYZE ${schema}.${pg.escapeIdentifier(tablename)}`);
        }
      });
    },
    async query(text) {
      let answer: number | undefined;
      await admin(async (client) => {
        await client.query(`SET search_path TO ${schema}`);
        const result = await client.query<Record<string, unknown>>(text);
        answer = firstNumber(result.rows[0]);
      });
      return answer;
    },
    async drop() {
      await admin((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
      const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
      try {
        await redis.connect();
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000);
          if (keys.length > 0) await redis.unlink(...keys);
          cursor = next;
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
    },
  };
}

/**
 * The environment a user would start the service with: ours, without any of the service's own
 * settings that the shell running the benchmark may hold. LOG_LEVEL is kept: unset, it is `info`.
 */
export function serviceEnv(extra: Env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    const own = /^(PORT|HOST|DATABASE_|REDIS_|PETSTORE_|PUBLIC_BASE_URL|TRUST_PROXY|CORS_)/;
    if (!own.test(name)) env[name] = value;
  }
  return { ...env, ...extra };
}

function runCli(args: string[], env: Env, checkout = ROOT): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [cliOf(checkout), ...args],
      { env: serviceEnv(env), maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`petstore ${args.join(' ')} failed: ${stderr || error}`));
        else resolve(stdout);
      },
    );
  });
}

/** `petstore seed` as many times as it takes (1,000,000 pets at most per call); returns seconds. */
export async function seedPets(
  count: number,
  env: Env,
  progress: (text: string) => void,
  checkout = ROOT,
) {
  const started = performance.now();
  for (let done = 0; done < count; done += SEED_BATCH) {
    const size = Math.min(SEED_BATCH, count - done);
    await runCli(['seed', '--count', String(size)], env, checkout);
    if (count > SEED_BATCH) {
      const seconds = (performance.now() - started) / 1000;
      progress(`seeded ${(done + size).toLocaleString('en')} pets (${seconds.toFixed(0)} s)`);
    }
  }
  return (performance.now() - started) / 1000;
}

/** An enterprise key far above the load; returns the key (the last line of stdout). */
export async function createKey(env: Env, checkout = ROOT): Promise<string> {
  const out = await runCli(
    [
      'keys',
      'create',
      '--plan',
      'enterprise',
      '--per-minute',
      String(KEY_LIMITS.perMinute),
      '--per-day',
      String(KEY_LIMITS.perDay),
      '--name',
      'npm run bench',
    ],
    env,
    checkout,
  );
  const key = out.trim().split('\n').pop();
  if (!key) throw new Error('petstore keys create printed no key');
  return key;
}

/** A port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('port')),
      );
    });
  });
}

/** A server process under test. */
export interface Server {
  readonly label: string;
  readonly pid: number;
  readonly url: string;
  /** Where its stdout (the service's log) goes; emptied between measurements. */
  readonly logPath: string;
  readonly errPath: string;
  stop(): Promise<void>;
  /** SIGKILL at once, for when there is no time to wait. */
  kill(): void;
}

/** Started servers, so that a stop (Ctrl-C, a failure) can end those still running. */
export const runningServers = new Set<Server>();

const STOP_GRACE_MS = 12_000;

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

async function startServer(
  label: string,
  script: string,
  env: NodeJS.ProcessEnv,
  port: number,
  dir: string,
  nodeOptions: readonly string[] = [],
  cores: Cores = undefined,
): Promise<Server> {
  const logPath = join(dir, `${label}.log`);
  const errPath = join(dir, `${label}.err`);
  // Appending, so that the file can be emptied while the process writes to it.
  const out = openSync(logPath, 'a');
  const err = openSync(errPath, 'a');
  const [command, args] = onCores(cores, process.execPath, [...nodeOptions, script]);
  const child = spawn(command, args, {
    env,
    stdio: ['ignore', out, err],
  });
  closeSync(out);
  closeSync(err);
  const url = `http://127.0.0.1:${port}`;
  const server: Server = {
    label,
    pid: child.pid ?? -1,
    url,
    logPath,
    errPath,
    async stop() {
      runningServers.delete(server);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited(child);
      clearTimeout(timer);
    },
    kill() {
      child.kill('SIGKILL');
    },
  };
  runningServers.add(server);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    const ready = await fetch(`${url}/readyz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return server;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await server.stop();
  const said = readFileSync(errPath, 'utf8').trim().split('\n').slice(-10).join('\n');
  throw new Error(`${label} did not become ready on ${url}:\n${said}`);
}

/** `nodeOptions`: flags for node itself, e.g. --cpu-prof; `checkout`: whose dist/ runs. */
export async function startService(
  label: string,
  storageEnv: Env,
  dir: string,
  nodeOptions: readonly string[] = [],
  placement: { checkout?: string; cores?: Cores } = {},
): Promise<Server> {
  const port = await freePort();
  const env = serviceEnv({ ...storageEnv, PORT: String(port) });
  const script = serviceOf(placement.checkout ?? ROOT);
  return startServer(label, script, env, port, dir, nodeOptions, placement.cores);
}

export async function startBaseline(
  label: string,
  config: Omit<BaselineConfig, 'port'>,
  dir: string,
  cores: Cores = undefined,
): Promise<Server> {
  const port = await freePort();
  const env = { ...process.env, BENCH_BASELINE_CONFIG: JSON.stringify({ ...config, port }) };
  return startServer(label, BASELINE, env, port, dir, [], cores);
}
