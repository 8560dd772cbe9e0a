/**
 * `npm run bench:reconnect-flood`: how a pipelined flood that reconnects after each close slows
 * other clients, with PIPELINE_PENALTY_SECONDS off (0) and at its default, against no flood.
 * Sequential probes from 127.0.0.1 (/healthz, and a keyed GET /v1/pets?limit=1) every 50 ms while
 * a flood client (pipelined-flood-client.ts --reconnect) pipelines from 127.0.0.3. Prints a
 * Markdown table.
 *
 * Options: --seconds N (per scenario, default 15), --connections N (flood, default 32),
 * --depth N (requests per write, default 2000), --out FILE (also write the table there).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'node:http';
import { loadAverage } from './proc.js';
import { createKey, runningServers, seedPets, sqliteStorage, startService } from './servers.js';

const FLOOD = fileURLToPath(new URL('./pipelined-flood-client.js', import.meta.url));

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}
const outAt = process.argv.indexOf('--out');
const out = outAt === -1 ? undefined : process.argv[outAt + 1];
const seconds = option('seconds', 15);
const connections = option('connections', 32);
const depth = option('depth', 2000);

/** One GET on a keep-alive agent of its own: milliseconds, or NaN when it failed. */
function timedGet(url: string, agent: Agent, key?: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(
      url,
      { agent, headers: key ? { authorization: `Bearer ${key}` } : {}, timeout: 10_000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200 ? performance.now() - started : NaN));
      },
    );
    req.on('error', () => resolve(NaN));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

function quantile(values: readonly number[], q: number): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

interface Row {
  scenario: string;
  health: number[];
  keyed: number[];
  floodOpened?: number;
  penalized?: string;
}

async function scenario(
  name: string,
  env: Record<string, string>,
  flood: boolean,
  storageEnv: Record<string, string>,
  key: string,
  dir: string,
): Promise<Row> {
  const server = await startService(name.replace(/\W+/g, '-'), { ...storageEnv, ...env }, dir);
  const port = new URL(server.url).port;
  const health: number[] = [];
  const keyed: number[] = [];
  let floodOpened: number | undefined;
  const child = flood
    ? spawn(
        process.execPath,
        [FLOOD, port, String(connections), String(depth), String(seconds), '--reconnect'],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      )
    : undefined;
  // Taken now: the flood may end before the probes do.
  const floodEnded = child ? new Promise((resolve) => child.once('exit', resolve)) : undefined;
  let printed = '';
  child?.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  // The flood's first connections are under way before the first probe.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const until = performance.now() + (seconds - 1) * 1000;
  while (performance.now() < until) {
    health.push(await timedGet(`${server.url}/healthz`, agent));
    keyed.push(await timedGet(`${server.url}/v1/pets?limit=1`, agent, key));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (child) {
    await floodEnded;
    floodOpened = (JSON.parse(printed.trim() || '{}') as { opened?: number }).opened;
  }
  const metrics = await fetch(`${server.url}/metrics`).then(
    (r) => r.text(),
    () => '',
  );
  const penalized = /petstore_connections_refused_total\{cap="penalized"\} (\d+)/.exec(
    metrics,
  )?.[1];
  const pipelined = /petstore_connections_refused_total\{cap="pipelined"\} (\d+)/.exec(
    metrics,
  )?.[1];
  agent.destroy();
  await server.stop();
  return {
    scenario: name,
    health,
    keyed,
    ...(floodOpened === undefined ? {} : { floodOpened }),
    penalized: `${pipelined ?? 0} closed pipelined, ${penalized ?? 0} refused penalized`,
  };
}

const fmt = (ms: number) => (Number.isFinite(ms) ? ms.toFixed(1) : '-');

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-reconnect-flood-'));
  const storage = sqliteStorage(dir);
  try {
    await seedPets(1000, storage.env, () => undefined);
    const key = await createKey(storage.env);
    const rows: Row[] = [];
    rows.push(await scenario('no flood', {}, false, storage.env, key, dir));
    rows.push(
      await scenario(
        'reconnecting flood, PIPELINE_PENALTY_SECONDS=0',
        { PIPELINE_PENALTY_SECONDS: '0' },
        true,
        storage.env,
        key,
        dir,
      ),
    );
    rows.push(
      await scenario('reconnecting flood, default penalty (10 s)', {}, true, storage.env, key, dir),
    );
    const lines = [
      `Flood: ${connections} connections from 127.0.0.3, ${depth} GETs per write, reconnecting at once after each close; ${seconds} s per scenario; probes sequential from 127.0.0.1 every 50 ms. Load average at the end: ${loadAverage()}.`,
      '',
      '| scenario | /healthz median ms | /healthz p90 ms | /healthz max ms | keyed read median ms | keyed read p90 ms | keyed read max ms | probes (failed) | flood connections opened | server counted |',
      '| :-- | --: | --: | --: | --: | --: | --: | --: | --: | :-- |',
      ...rows.map(
        (r) =>
          `| ${r.scenario} | ${fmt(quantile(r.health, 0.5))} | ${fmt(quantile(r.health, 0.9))} | ` +
          `${fmt(quantile(r.health, 1))} | ${fmt(quantile(r.keyed, 0.5))} | ` +
          `${fmt(quantile(r.keyed, 0.9))} | ${fmt(quantile(r.keyed, 1))} | ` +
          `${r.health.length + r.keyed.length} (${[...r.health, ...r.keyed].filter((v) => !Number.isFinite(v)).length}) | ` +
          `${r.floodOpened ?? '-'} | ${r.penalized ?? ''} |`,
      ),
    ];
    const table = lines.join('\n');
    console.log(table);
    if (out) writeFileSync(out, `${table}\n`);
  } finally {
    for (const server of runningServers) server.kill();
    await storage.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
