import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createKey,
  REPO_ROOT,
  spawnServer,
  tempDatabaseUrl,
  type ServerProcess,
} from '../helpers/server-process.js';
import { portOf } from '../helpers/raw-http.js';
import { scaled } from '../helpers/machine.js';

/**
 * A pipelined flood without a key (issue 19 item 5): 100 connections from one address (under the
 * per-address cap of 256), each writing 2,000 GETs at a time and topping up, never reading an
 * answer. Before, the server read all of it: 1.6 GB within 8 s and /healthz unanswered (with the
 * issue's 200 connections, past 2 GB in 10 s, then it aborted out of heap). Now a connection more
 * than 128 requests ahead of its answers is closed, so the flood cannot hold memory, and other
 * clients are served throughout. The flood runs in a process of its own; the server is the built
 * one. 100 connections, not 200: the parsing of their first reads takes the CPU for a second or
 * two, and other test files run beside this one.
 */

const CONNECTIONS = 100;
const DEPTH = 2_000;
/**
 * 8 s on an idle machine; longer on a busy one (at most 40 s), where the server, scheduled less,
 * reached only 77 of the 100 connections within 8 s (load 10 on 2 cores): every connection must
 * have sent past the bound before the flood ends for each to be closed.
 */
const floodSeconds = () => Math.min(40, Math.round(scaled(8_000) / 1000));
/**
 * The flood's first read of each connection (64 KiB, some 1,800 requests) is parsed before it can
 * be closed: 185-270 MB at most here. Before, the server kept reading: 1.6 GB within 8 s.
 */
const RSS_BOUND_MB = 800;

const running: ServerProcess[] = [];
afterEach(() => {
  for (const server of running.splice(0)) {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  }
});

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

function flood(port: number, seconds: number): Promise<{ opened: number; closedByServer: number }> {
  const client = spawn(
    process.execPath,
    [
      join(REPO_ROOT, 'bench/pipelined-flood-client.ts'),
      String(port),
      String(CONNECTIONS),
      String(DEPTH),
      String(seconds),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  client.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve, reject) =>
    client.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as never) : reject(new Error(`flood exited ${code}`)),
    ),
  );
}

interface Answer {
  ms: number;
  status: number | 'error';
}

async function timedGet(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const started = performance.now();
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(15_000) });
    await res.text();
    return { ms: Math.round(performance.now() - started), status: res.status };
  } catch {
    return { ms: Math.round(performance.now() - started), status: 'error' };
  }
}

describe('a pipelined flood from one address that never reads its answers', () => {
  it('closes each flooding connection, keeps memory bounded, and serves other clients throughout', async () => {
    const database = tempDatabaseUrl();
    // The other client's probes may run for up to 40 s (floodSeconds): more than a free key's
    // 60 a minute.
    const key = await createKey(database, 'business');
    const server = await spawnServer({ DATABASE_URL: database });
    running.push(server);
    const pid = server.child.pid ?? 0;
    const seconds = floodSeconds();
    const flooding = flood(portOf(server.url), seconds);

    const health: Answer[] = [];
    const pets: Answer[] = [];
    let maxRss = rssMb(pid);
    const until = Date.now() + seconds * 1000 - 500;
    while (Date.now() < until) {
      health.push(await timedGet(`${server.url}/healthz`));
      pets.push(
        await timedGet(`${server.url}/v1/pets?limit=1`, { authorization: `Bearer ${key}` }),
      );
      maxRss = Math.max(maxRss, rssMb(pid));
      await new Promise((r) => setTimeout(r, 200));
    }
    const result = await flooding;
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const counted = (cap: string) =>
      Number(
        new RegExp(`petstore_connections_refused_total\\{cap="${cap}"\\} (\\d+)`).exec(
          metrics,
        )?.[1] ?? 0,
      );
    // A connection accepted after the first was closed is refused on arrival (the address's
    // PIPELINE_PENALTY_SECONDS): closed either way, counted under one cap or the other.
    const closedForPipelining = counted('pipelined') + counted('penalized');

    const times = (answers: Answer[]) => answers.map((a) => a.ms).sort((a, b) => a - b);
    const median = (sorted: number[]) => sorted[Math.floor(sorted.length / 2)] ?? Infinity;
    console.log(
      `[pipelined flood] ${result.closedByServer}/${result.opened} flooding connections closed ` +
        `(${closedForPipelining} counted), server RSS at most ${maxRss} MB; /healthz over ` +
        `${health.length} probes: median ${median(times(health))} ms, slowest ` +
        `${times(health).at(-1)} ms; a keyed list: median ${median(times(pets))} ms, slowest ` +
        `${times(pets).at(-1)} ms`,
    );
    expect(server.child.exitCode).toBeNull();
    expect(result.opened).toBe(CONNECTIONS);
    expect(result.closedByServer).toBe(CONNECTIONS);
    // Every flooding connection is closed (above); most for pipelining, counted. On a starved
    // machine (two suites side by side, load 16: 93 of 100 counted; a machine of slow system
    // calls at load 10: 81) a connection whose first reads came short of the bound can be closed
    // by another defence first, the request timeouts, which this cap does not count.
    expect(closedForPipelining).toBeGreaterThanOrEqual(CONNECTIONS * 0.5);
    expect(closedForPipelining).toBeLessThanOrEqual(CONNECTIONS);
    expect(maxRss).toBeLessThan(RSS_BOUND_MB);
    expect(health.every((a) => a.status === 200)).toBe(true);
    expect(pets.every((a) => a.status === 200)).toBe(true);
    // Milliseconds once the flood's first reads are parsed (a second or two on a busy 2-core
    // machine); before, no answer came at all.
    expect(median(times(health))).toBeLessThan(scaled(1_000));
    expect(median(times(pets))).toBeLessThan(scaled(1_000));
  });
});
