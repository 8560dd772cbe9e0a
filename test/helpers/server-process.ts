import { randomUUID } from 'node:crypto';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKey as createKeyInProcess } from '../cli/cli-harness.js';
import { testRunEnv } from './test-run.js';

export const REPO_ROOT = new URL('../../', import.meta.url).pathname;

export function tempDatabaseUrl(): string {
  return `sqlite:${join(mkdtempSync(join(tmpdir(), 'petstore-')), 'petstore.db')}`;
}

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** Ports this process has handed out: a test often takes several before any of them listens. */
const handedOut = new Set<number>();

/**
 * The part of 20000-31999 this process draws from: vitest numbers the workers running at once
 * (VITEST_POOL_ID, 1 to maxWorkers), and each takes a slice of its own, so that two files never
 * pick the same port before either listens. Outside vitest, the whole range.
 */
function portRange(): { low: number; size: number } {
  const slices = 8;
  const size = 12_000 / slices;
  const poolId = Number(process.env.VITEST_POOL_ID);
  if (!Number.isInteger(poolId) || poolId < 1) return { low: 20_000, size: 12_000 };
  return { low: 20_000 + ((poolId - 1) % slices) * size, size };
}

/**
 * A port p where p..p+count-1 are all free, and none handed out before by this process, for a
 * script that puts its instances on the ports after its own. It lies below the kernel's ephemeral
 * range (32768 and up), so the suite's many outgoing connections cannot take one of them between
 * this check and the script's listen.
 */
export async function freePortBlock(count: number): Promise<number> {
  const { low, size } = portRange();
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = low + Math.floor(Math.random() * (size - count));
    let free = true;
    for (let port = base; free && port < base + count; port++) {
      free = !handedOut.has(port) && (await listenable(port));
    }
    if (free) {
      for (let port = base; port < base + count; port++) handedOut.add(port);
      return base;
    }
  }
  throw new Error(`no ${count} free ports in a row in ${low}-${low + size - 1}`);
}

/**
 * A free port for a process to listen on, below the ephemeral range for the same reason: a port
 * the kernel handed out as free (listen on 0) was taken by one of the suite's outgoing
 * connections before the server listened on it (EADDRINUSE, seen with four files at a time).
 */
export function freePort(): Promise<number> {
  return freePortBlock(1);
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

/**
 * Starts the built server (`npm start` or `node dist/main.js`) and waits until it listens. With
 * `umask` (e.g. 0o000) it runs under that umask instead of the test runner's.
 */
export async function spawnServer(
  env: Record<string, string>,
  how: 'npm' | 'node' = 'node',
  options: { umask?: number; cwd?: string } = {},
): Promise<ServerProcess> {
  // Another process of the suite may take the port between freePort's check and the server's
  // listen (two files picking the same free port at once): then the start is tried on another.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await spawnOnce(env, how, options, port);
    } catch (error) {
      const takenMeanwhile = error instanceof PortTaken && error.port === port;
      if (!takenMeanwhile || attempt >= 3) throw error;
    }
  }
}

/** The server could not listen on the port it was given: another process had just taken it. */
class PortTaken extends Error {
  constructor(
    readonly port: number,
    output: string,
  ) {
    super(`server did not start:\n${output}`);
  }
}

async function spawnOnce(
  env: Record<string, string>,
  how: 'npm' | 'node',
  options: { umask?: number; cwd?: string },
  port: number,
): Promise<ServerProcess> {
  const server: [string, string[]] =
    how === 'npm' ? ['npm', ['start', '--silent']] : ['node', ['dist/main.js']];
  const [command, args] =
    options.umask === undefined
      ? server
      : [
          'sh',
          [
            '-c',
            `umask ${options.umask.toString(8).padStart(3, '0')} && exec ${server.flat().join(' ')}`,
          ],
        ];
  const child = spawn(command, args as string[], {
    cwd: options.cwd ?? REPO_ROOT,
    // No drain unless a test asks for one: a SIGTERM would otherwise wait DRAIN_SECONDS (5 s).
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...testRunEnv(),
      PORT: String(port),
      DRAIN_SECONDS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  // Its output is whole once its pipes close, which may come after its exit.
  const closed = new Promise((resolve) => child.once('close', resolve));
  // A start takes about 2 s of CPU; on a 2-core machine shared with other test runs, that can
  // stretch past 15 s of wall time without anything being wrong.
  const deadline = Date.now() + 60_000;
  while (!output.includes('listening')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      await closed;
      if (output.includes(`EADDRINUSE: address already in use 127.0.0.1:${port}`)) {
        throw new PortTaken(port, output);
      }
      throw new Error(`server did not start:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, url: `http://127.0.0.1:${port}`, output: () => output, exited };
}

/** Resolves once the server has written `text` (a log line says what it did); 60 s at most. */
export async function untilOutput(server: ServerProcess, text: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!server.output().includes(text)) {
    if (server.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`the server did not write ${JSON.stringify(text)}:\n${server.output()}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Resolves once every line the server logged before this call has reached `output()`: a request
 * it always logs (a 404) carries a request id of this call's own, and the server writes its lines
 * in order.
 */
export async function outputCaughtUp(server: ServerProcess): Promise<void> {
  const id = `caught-up-${randomUUID()}`;
  await fetch(`${server.url}/v1/caught-up`, { headers: { 'x-request-id': id } });
  await untilOutput(server, id);
}

/**
 * A new key made by the CLI's `keys create --plan <plan>` (a non-interactive start makes none):
 * returns the key. The CLI runs in this process: the built CLI as a process of its own is tested
 * in test/cli/binary.test.ts and the key-life tests, and each such run cost half a second of CPU.
 */
export async function createKey(databaseUrl: string, plan = 'free'): Promise<string> {
  return (await createKeyInProcess(databaseUrl, ['--plan', plan])).key;
}
