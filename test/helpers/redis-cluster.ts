import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, it } from 'vitest';
import type { RedisNode } from '../../src/config/config.js';
import { freePort } from './server-process.js';

const HOST = '127.0.0.1';
/** Short, so the cluster marks a stopped master as failed within the test's patience. */
const NODE_TIMEOUT_MS = 1_000;
const START_TIMEOUT_MS = 20_000;

/** Whether redis-server and redis-cli are on PATH. */
function redisBinariesInstalled(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    execFileSync('redis-cli', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether `suite`, which starts its own Redis Cluster, can run: without redis-server it is skipped
 * with a warning, except in CI (CI=true), where that is one failing test.
 */
export function requireRedisBinaries(suite: string): boolean {
  if (redisBinariesInstalled()) return true;
  const why = 'redis-server and redis-cli are not on PATH (apt-get install redis-server)';
  if (process.env.CI === 'true') {
    describe(suite, () => {
      it('needs redis-server', () => {
        throw new Error(`${why}: CI must provide them`);
      });
    });
  } else {
    console.warn(`skipping ${suite}: ${why}`);
    describe.skip(suite, () => {
      it('needs redis-server', () => {});
    });
  }
  return false;
}

function run(file: string, args: readonly string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${file} ${args.join(' ')} failed: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One master of the cluster: its own port, directory and node config file. */
class ClusterNodeProcess {
  private child: ChildProcess | undefined;
  private output = '';

  constructor(
    readonly port: number,
    /** The cluster bus port, chosen free too (the default, port + 10000, may be taken). */
    private readonly busPort: number,
    private readonly dir: string,
  ) {
    mkdirSync(dir, { recursive: true });
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /**
   * Starts (again) on the same port with the same node config file, so a restarted master comes
   * back as the same node holding the same slots.
   */
  async start(): Promise<void> {
    if (this.child) throw new Error(`the master on ${this.port} is already running`);
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        HOST,
        '--cluster-enabled',
        'yes',
        '--cluster-port',
        String(this.busPort),
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        String(NODE_TIMEOUT_MS),
        // The other masters keep serving their slots while one is down, as the README advises.
        '--cluster-require-full-coverage',
        'no',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.dir,
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
    const deadline = Date.now() + 5_000;
    for (;;) {
      const pong = await run('redis-cli', ['-h', HOST, '-p', String(this.port), 'PING'], 1_000)
        .then((out) => out.trim() === 'PONG')
        .catch(() => false);
      if (pong) return;
      if (!this.child || Date.now() > deadline) {
        throw new Error(`redis-server on port ${this.port} did not start:\n${this.output}`);
      }
      await sleep(50);
    }
  }

  /** SIGTERM, SIGKILL after 5 s; resolves once it has exited. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited(child);
    clearTimeout(timer);
  }

  kill(): void {
    this.child?.kill('SIGCONT');
    this.child?.kill('SIGKILL');
  }

  /** Freezes the server: connections stay open, nothing is answered. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  async killAndWait(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited(child);
  }
}

/**
 * A Redis Cluster of three masters (no replicas) on free ports on 127.0.0.1, in a temporary
 * directory, made by `redis-cli --cluster create`. Always `kill()` it in afterAll; a process exit
 * kills the servers too, should afterAll never run.
 */
export class RedisClusterForTest {
  private readonly killOnExit = () => {
    for (const node of this.masters) node.kill();
  };

  private constructor(
    private readonly dir: string,
    private readonly masters: readonly ClusterNodeProcess[],
  ) {
    process.once('exit', this.killOnExit);
  }

  static async start(): Promise<RedisClusterForTest> {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-redis-cluster-'));
    const taken: number[] = [];
    // freePort may hand out the same port twice when asked in a row before either is taken.
    while (taken.length < 6) {
      const port = await freePort();
      if (!taken.includes(port)) taken.push(port);
    }
    const ports = taken.slice(0, 3);
    const cluster = new RedisClusterForTest(
      dir,
      ports.map(
        (port, i) => new ClusterNodeProcess(port, taken[3 + i] as number, join(dir, String(port))),
      ),
    );
    try {
      await Promise.all(cluster.masters.map((node) => node.start()));
      await run(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...ports.map((port) => `${HOST}:${port}`),
          '--cluster-replicas',
          '0',
          '--cluster-yes',
        ],
        START_TIMEOUT_MS,
      );
      await cluster.waitUntilOk();
    } catch (error) {
      await cluster.kill();
      throw error;
    }
    return cluster;
  }

  get nodes(): RedisNode[] {
    return this.masters.map(({ port }) => ({ host: HOST, port }));
  }

  /** REDIS_CLUSTER_NODES naming every master. */
  get seedList(): string {
    return this.nodes.map(({ host, port }) => `${host}:${port}`).join(',');
  }

  /**
   * The master's port serving `key`'s slot (by asking the cluster, not by computing it). Asks each
   * running master in turn until one answers in full: a frozen one does not, and a busy machine
   * can make redis-cli time out.
   */
  async portOf(key: string): Promise<number> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      for (const node of this.masters.filter((master) => master.running)) {
        try {
          const port = String(node.port);
          const slot = Number(
            await run('redis-cli', ['-h', HOST, '-p', port, 'CLUSTER', 'KEYSLOT', key], 5_000),
          );
          const slots = await run(
            'redis-cli',
            ['-h', HOST, '-p', port, '--json', 'CLUSTER', 'SLOTS'],
            5_000,
          );
          const ranges = JSON.parse(slots) as Array<
            [number, number, [string, number, ...unknown[]]]
          >;
          const range = ranges.find(([from, to]) => slot >= from && slot <= to);
          if (range) return range[2][1];
        } catch (error) {
          if (Date.now() > deadline) throw error;
        }
      }
      if (Date.now() > deadline) throw new Error(`no master answered which holds ${key}`);
      await sleep(100);
    }
  }

  /** The port of the master holding a subscribed connection (`sub=1` in CLIENT LIST). */
  async portWithSubscriber(): Promise<number> {
    for (const node of this.masters) {
      if (!node.running) continue;
      const list = await run(
        'redis-cli',
        ['-h', HOST, '-p', String(node.port), 'CLIENT', 'LIST'],
        2_000,
      );
      if (/ sub=[1-9]/.test(list)) return node.port;
    }
    throw new Error('no master holds a subscribed connection');
  }

  /** Starts a stopped master again without waiting for the cluster (when others are down too). */
  async startMasterOnly(port: number): Promise<void> {
    await this.master(port).start();
  }

  /** Freezes a master (SIGSTOP): its connections stay open and nothing is answered. */
  pauseMaster(port: number): void {
    this.master(port).pause();
  }

  /** Thaws a frozen master, then waits until every master sees the cluster ok. */
  async resumeMaster(port: number): Promise<void> {
    this.master(port).resume();
    await this.waitUntilOk();
  }

  masterRunning(port: number): boolean {
    return this.master(port).running;
  }

  async stopMaster(port: number): Promise<void> {
    await this.master(port).stop();
  }

  /** Starts a stopped master again, then waits until every master sees the cluster ok. */
  async startMaster(port: number): Promise<void> {
    await this.master(port).start();
    await this.waitUntilOk();
  }

  /** A plain connection to one master, for looking at what the code under test wrote there. */
  adminClient(port: number): Redis {
    return new Redis({
      host: HOST,
      port,
      maxRetriesPerRequest: 1,
      commandTimeout: 5_000,
      lazyConnect: true,
    });
  }

  /** Every master says `cluster_state:ok` and knows all three masters as connected. */
  async waitUntilOk(timeoutMs = START_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      const states = await Promise.all(
        this.masters.map(async ({ port }) => {
          const args = ['-h', HOST, '-p', String(port)];
          const info = await run('redis-cli', [...args, 'CLUSTER', 'INFO'], 2_000).catch(
            (e: Error) => e.message,
          );
          const nodes = await run('redis-cli', [...args, 'CLUSTER', 'NODES'], 2_000).catch(
            (e: Error) => e.message,
          );
          const connected = nodes
            .split('\n')
            .filter((line) => line.includes('master') && line.includes(' connected')).length;
          last = `${port}: ${info.split('\n').find((l) => l.startsWith('cluster_state')) ?? info} (${connected} masters connected)`;
          return info.includes('cluster_state:ok') && connected === 3 && !nodes.includes('fail');
        }),
      );
      if (states.every(Boolean)) return;
      if (Date.now() > deadline)
        throw new Error(`Redis Cluster not ok after ${timeoutMs} ms: ${last}`);
      await sleep(100);
    }
  }

  /** Ends every master for good and removes the directory. */
  async kill(): Promise<void> {
    await Promise.all(this.masters.map((node) => node.killAndWait()));
    process.off('exit', this.killOnExit);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private master(port: number): ClusterNodeProcess {
    const found = this.masters.find((node) => node.port === port);
    if (!found) throw new Error(`no master on port ${port}`);
    return found;
  }
}
