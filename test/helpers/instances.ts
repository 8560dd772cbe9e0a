import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'node:http';
import { untilReady } from './bad-days.js';
import { createKey } from '../cli/cli-harness.js';
import { REPO_ROOT, type ServerProcess, spawnServer } from './server-process.js';
import { testRunEnv } from './test-run.js';
import { scaled } from './machine.js';
import { requestText } from './raw-http.js';

/**
 * How long an instance may take to say ready: its Redis (Cluster) connection comes up after it
 * listens, and on a starved machine (two suites side by side, load 16) that took over 20 s.
 * Stretched by load, within the hook timeout.
 */
const READY_WITHIN_MS = 20_000;
const READY_AT_MOST_MS = 90_000;

/**
 * Several processes of the built service (`node dist/main.js`), each on its own port, started and
 * stopped together. `stop()` ends every one still running (SIGTERM, SIGKILL after a grace); a
 * process exit kills them too, should afterAll never run.
 */
export class Instances {
  private readonly running = new Set<ServerProcess>();
  private readonly killOnExit = () => {
    for (const server of this.running) server.child.kill('SIGKILL');
  };

  constructor() {
    process.once('exit', this.killOnExit);
  }

  /**
   * Starts `count` instances with the same environment, together; resolves once all listen and
   * say ready, as a load balancer would wait for: an instance listens before its Redis (Cluster)
   * connection is up, and answers 503 until it is.
   */
  async start(count: number, env: Record<string, string>): Promise<ServerProcess[]> {
    const started = await Promise.allSettled(
      Array.from({ length: count }, () => this.startOne(env)),
    );
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    return started.map((s) => (s as PromiseFulfilledResult<ServerProcess>).value);
  }

  async startOne(env: Record<string, string>): Promise<ServerProcess> {
    // Every test client connects from 127.0.0.1, as clients behind a proxy would: the per-address
    // cap is raised to the total, as the README advises for that case.
    const server = await spawnServer({ MAX_CONNECTIONS_PER_ADDRESS: '4096', ...env });
    this.running.add(server);
    void server.exited.then(() => this.running.delete(server));
    await untilReady(server.url, 200, Math.min(scaled(READY_WITHIN_MS), READY_AT_MOST_MS)).catch(
      (error: unknown) => {
        throw new Error(`${server.url}: ${String(error)}\n${server.output()}`);
      },
    );
    return server;
  }

  /** Ends every instance still running: SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 5_000): Promise<void> {
    await Promise.all(
      [...this.running].map(async (server) => {
        server.child.kill('SIGTERM');
        const timer = setTimeout(() => server.child.kill('SIGKILL'), graceMs);
        await server.exited;
        clearTimeout(timer);
      }),
    );
    process.off('exit', this.killOnExit);
  }
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** When the process exited (Date.now()). */
  endedAt: number;
}

/**
 * Runs the built CLI (`node dist/cli/main.js`) as an operator would, with only the environment
 * given (plus PATH and HOME); killed when it takes longer than `timeoutMs`.
 */
export function runPetstore(
  env: Record<string, string>,
  args: readonly string[],
  timeoutMs = 20_000,
): Promise<CliRun> {
  // A CLI still running at the deadline is first asked for Node's diagnostic report, so that its
  // stderr names what kept it from exiting (sockets, timers), then killed.
  const reports = mkdtempSync(join(tmpdir(), 'petstore-cli-report-'));
  const reportOptions = `--report-on-signal --report-signal=SIGUSR2 --report-directory=${reports}`;
  return new Promise((resolve, reject) => {
    const child = spawn('node', ['dist/cli/main.js', ...args], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ...testRunEnv(),
        ...env,
        NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} ${reportOptions}`.trim(),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let kill: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      child.kill('SIGUSR2');
      kill = setTimeout(() => child.kill('SIGKILL'), 2_000);
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      clearTimeout(kill);
      rmSync(reports, { recursive: true, force: true });
    };
    child.once('error', (error) => {
      done();
      reject(error);
    });
    child.once('close', (code) => {
      if (kill !== undefined) {
        stderr += `\n[runPetstore] still running after ${timeoutMs} ms, killed; ${activeHandles(reports)}\n`;
      }
      done();
      resolve({ code, stdout, stderr, endedAt: Date.now() });
    });
  });
}

/** The handles that kept a process alive, from the diagnostic report it wrote into `folder`. */
function activeHandles(folder: string): string {
  const file = readdirSync(folder).find((name) => name.endsWith('.json'));
  if (file === undefined) return 'it wrote no diagnostic report';
  const report = JSON.parse(readFileSync(join(folder, file), 'utf8')) as {
    libuv?: Array<Record<string, unknown>>;
  };
  const handles = (report.libuv ?? [])
    .filter((handle) => handle.is_active === true && handle.is_referenced === true)
    .filter(
      (handle) =>
        !['async', 'check', 'prepare', 'idle', 'loop', 'signal'].includes(String(handle.type)),
    )
    .map((handle) =>
      [handle.type, handle.localEndpoint, handle.remoteEndpoint, handle.filename]
        .filter((part) => part !== undefined && part !== null)
        .map((part) => (typeof part === 'string' ? part : JSON.stringify(part)))
        .join(' '),
    );
  return `handles keeping it running: ${handles.join('; ') || 'none'}`;
}

/** `keys create` through the CLI (run in this process); returns the key and its id. */
export function createKeyWithCli(
  env: Record<string, string>,
  args: readonly string[],
): Promise<{ key: string; id: string }> {
  return createKey(env.DATABASE_URL ?? '', args, env);
}

export interface Answer {
  status: number;
  headers: Headers;
  /** The parsed JSON body (undefined when there was none). */
  body: unknown;
  /** Milliseconds from sending to the whole body read. */
  ms: number;
  /** When the body was read (Date.now()). */
  at: number;
}

/** Connections kept between the calls of a file, as a client's would be. */
const agent = new Agent({ keepAlive: true });

/** One request with the key, bounded in time; rejects on a network failure or timeout. */
export async function call(
  url: string,
  options: {
    key?: string;
    method?: string;
    body?: unknown;
    headers?: Record<string, string>;
    timeoutMs?: number;
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const started = performance.now();
  const response = await requestText(url, {
    method: options.method ?? (body === undefined ? 'GET' : 'POST'),
    agent,
    headers,
    body,
    timeoutMs: options.timeoutMs ?? 15_000,
  });
  const received = new Headers();
  const raw = response.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2)
    received.append(raw[i] as string, raw[i + 1] as string);
  return {
    status: response.status,
    headers: received,
    body: response.text === '' ? undefined : (JSON.parse(response.text) as unknown),
    ms: performance.now() - started,
    at: Date.now(),
  };
}

/** The error code of an Error body, or undefined. */
export function codeOf(answer: Answer): string | undefined {
  const body = answer.body as { code?: unknown } | undefined;
  return typeof body?.code === 'string' ? body.code : undefined;
}

/** The URL of a `Link: <...>; rel="next"` header, or undefined on the last page. */
export function nextLink(headers: Headers): string | undefined {
  const link = headers.get('link') ?? '';
  return /<([^>]+)>;\s*rel="next"/.exec(link)?.[1];
}

/** `url` with the scheme, host and port of `base` (the instance a walk hops to). */
export function onInstance(url: string, base: string): string {
  const moved = new URL(url);
  const target = new URL(base);
  moved.protocol = target.protocol;
  moved.host = target.host;
  return moved.toString();
}

/** How many times `text` occurs in `output`. */
export function occurrences(output: string, text: string): number {
  return output.split(text).length - 1;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
