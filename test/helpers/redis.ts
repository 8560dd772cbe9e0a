import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { RedisConfig } from '../../src/config/config.js';
import { freePort } from './server-process.js';
import { serviceUrl } from './services.js';

/** A config on the shared test Redis with a prefix of its own, so files and runs never collide. */
export function testRedisConfig(overrides: Partial<RedisConfig> = {}): RedisConfig {
  return {
    url: serviceUrl.redis,
    keyPrefix: `test:${randomUUID()}:`,
    commandTimeoutMs: 1_000,
    ...overrides,
  };
}

/** A plain connection for looking at what the code under test wrote. */
export function adminClient(url: string = serviceUrl.redis): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: 5_000, lazyConnect: true });
}

/** One section of INFO from the Redis at `url`. */
export async function redisInfo(url: string, section: string): Promise<string> {
  const admin = adminClient(url);
  try {
    return await admin.info(section);
  } finally {
    admin.disconnect();
  }
}

/** Every key that starts with `prefix` (the prefixes tests use hold no glob characters). */
export async function keysWithPrefix(client: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

export async function deleteKeysWithPrefix(client: Redis, prefix: string): Promise<void> {
  const keys = await keysWithPrefix(client, prefix);
  for (let i = 0; i < keys.length; i += 500) await client.unlink(...keys.slice(i, i + 500));
}

/** Resolves true once Redis on `port` answers PING, false when `timeoutMs` passes first. */
async function answersPing(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      const finish = (answer: boolean) => {
        clearTimeout(timer);
        socket.destroy();
        resolve(answer);
      };
      const timer = setTimeout(() => finish(false), 500);
      socket.once('error', () => finish(false));
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (chunk: Buffer) => finish(chunk.toString().startsWith('+PONG')));
    });
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * A redis-server of the test's own on a free port (no persistence), to stop, pause and start
 * again without disturbing the shared one. Always `kill()` it in afterAll; a process exit kills it
 * too, should afterAll never run.
 */
export class PrivateRedis {
  private child: ChildProcess | undefined;
  private output = '';
  private readonly dir = mkdtempSync(join(tmpdir(), 'petstore-redis-'));
  private readonly killOnExit = () => this.child?.kill('SIGKILL');

  private constructor(
    readonly port: number,
    private readonly extraArgs: readonly string[],
  ) {
    process.once('exit', this.killOnExit);
  }

  static async start(extraArgs: readonly string[] = []): Promise<PrivateRedis> {
    const server = new PrivateRedis(await freePort(), extraArgs);
    try {
      await server.start();
    } catch (error) {
      await server.kill();
      throw error;
    }
    return server;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts (again) on the same port; resolves once it answers PING. */
  async start(): Promise<void> {
    if (this.child) throw new Error('this redis-server is already running');
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.dir,
        ...this.extraArgs,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    const keep = (chunk: Buffer) => (this.output = (this.output + chunk.toString()).slice(-5_000));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.once('exit', () => {
      if (this.child === child) this.child = undefined;
    });
    if (!(await answersPing(this.port, 5_000))) {
      throw new Error(`redis-server on port ${this.port} did not start:\n${this.output}`);
    }
  }

  /** Stops the server (SIGTERM, SIGKILL after 5 s); resolves once it has exited. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited(child);
    clearTimeout(timer);
  }

  /** The redis-server's process id, as it reports it. */
  async pid(): Promise<number> {
    const admin = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      return Number(/process_id:(\d+)/.exec(await admin.info('server'))?.[1]);
    } finally {
      admin.disconnect();
    }
  }

  /** CPU time (ms, user and system) a process has used, from /proc. */
  static cpuMs(pid: number): number {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime and stime: fields 14 and 15 of stat, 12 and 13 after the command's closing paren.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  }

  /** Freezes the server: connections stay open, nothing is answered. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** Ends the server for good and removes its directory. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child) {
      child.kill('SIGKILL');
      await exited(child);
    }
    process.off('exit', this.killOnExit);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Waits until `check` resolves true, trying every `everyMs`; throws after `timeoutMs`. */
export async function eventually(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 10_000,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
