/**
 * Runs wrk (Debian's package) with bench/load.lua against one or more servers at once, and reads
 * back what the script's done() prints.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type Cores, onCores } from './cores.js';

export const SCENARIOS = [
  'list',
  'list-gzip',
  'list-304',
  'list-status',
  'list-cursor',
  'list-last',
  'get',
  'create',
  'mix',
] as const;
export type Scenario = (typeof SCENARIOS)[number];

export function isScenario(name: string): name is Scenario {
  return (SCENARIOS as readonly string[]).includes(name);
}

/** What one wrk process reports (see done() in bench/load.lua); times in microseconds. */
export interface WrkResult {
  requests: number;
  durationUs: number;
  responses: number;
  unexpected: number;
  unexpectedStatuses: string;
  socketErrors: number;
  timeouts: number;
  p50Us: number;
  p99Us: number;
  meanUs: number;
  maxUs: number;
}

/** Several wrk processes taken together (one per server instance). */
export interface LoadResult {
  requests: number;
  /** Sum of the rates of each wrk process. */
  requestsPerSecond: number;
  /** Weighted by requests when several processes ran. */
  p50Ms: number;
  /** The highest of the processes' p99s (their histograms cannot be merged). */
  p99Ms: number;
  /** Responses outside 200-299, socket errors and timeouts. */
  failures: number;
  failureDetail: string;
}

export interface LoadRun {
  scenario: Scenario;
  /** One base URL per server instance; connections are split evenly among them. */
  targets: readonly string[];
  connections: number;
  durationSeconds: number;
  key: string;
  /** --keys: a file of keys, one a line; each request carries one of them instead of `key`. */
  keysFile: string | undefined;
  pets: number;
  /** list-cursor: where walks start (paths with their query). */
  startPaths: readonly string[];
  /** --rate: requests a second for each target's wrk process; undefined: as fast as answers come. */
  ratePerTarget: number | undefined;
  /** --pin: the cores wrk runs on. */
  cores?: Cores;
}

const SCRIPT = fileURLToPath(new URL('../../../bench/load.lua', import.meta.url));
const MARK = 'BENCH_RESULT ';

/** Installs wrk with apt-get when it is missing (as root, or through sudo). */
export function ensureWrk(): void {
  try {
    execFileSync('wrk', ['-v'], { stdio: 'ignore' });
    return;
  } catch (error) {
    // wrk -v exits 1 after printing its version: only a missing binary is a problem.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return;
  }
  process.stderr.write('bench: installing wrk (Debian package)\n');
  const root = process.getuid?.() === 0;
  const [command, ...args] = [...(root ? [] : ['sudo']), 'apt-get', 'install', '-y', '-qq', 'wrk'];
  execFileSync(command as string, args, { stdio: 'inherit' });
}

/** Started processes, so that a stop (Ctrl-C, a failure) can end those still running. */
export const runningWrk = new Set<ChildProcess>();

function runOne(run: LoadRun, target: string, connections: number): Promise<WrkResult> {
  return runWrk<WrkResult>({
    what: `wrk ${run.scenario} on ${target}`,
    script: SCRIPT,
    target,
    connections,
    durationSeconds: run.durationSeconds,
    headers: run.keysFile === undefined ? [`Authorization: Bearer ${run.key}`] : [],
    cores: run.cores,
    scriptArgs: [
      run.scenario,
      String(run.pets),
      run.keysFile ?? '-',
      // Each connection waits this many whole milliseconds after an answer before its next request
      // (wrk's delay()): about connections / rate, a little slower by the answer's own time.
      String(
        run.ratePerTarget === undefined
          ? 0
          : Math.max(1, Math.round((connections * 1000) / run.ratePerTarget)),
      ),
      ...(run.scenario === 'list-cursor' || run.scenario === 'list-last' ? run.startPaths : []),
    ],
  });
}

/** One wrk process (1 thread) with a Lua script whose done() prints `BENCH_RESULT {json}`. */
export function runWrk<T>(run: {
  what: string;
  script: string;
  target: string;
  connections: number;
  durationSeconds: number;
  headers: readonly string[];
  scriptArgs: readonly string[];
  cores?: Cores;
}): Promise<T> {
  const args = [
    '-t1',
    `-c${run.connections}`,
    `-d${run.durationSeconds}s`,
    '--timeout',
    '5s',
    ...run.headers.flatMap((header) => ['-H', header]),
    '-s',
    run.script,
    run.target,
    '--',
    ...run.scriptArgs,
  ];
  return new Promise((resolve, reject) => {
    const [command, commandArgs] = onCores(run.cores, 'wrk', args);
    const child = spawn(command, commandArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
    runningWrk.add(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      runningWrk.delete(child);
      const line = out.split('\n').find((l) => l.startsWith(MARK));
      if (code !== 0 || line === undefined) {
        reject(new Error(`${run.what} ended (${signal ?? code}):\n${err}${out}`));
        return;
      }
      resolve(JSON.parse(line.slice(MARK.length)) as T);
    });
  });
}

/** Runs the scenario against every target at once, connections split evenly, and sums up. */
export async function runLoad(run: LoadRun): Promise<LoadResult> {
  const share = Math.max(1, Math.floor(run.connections / run.targets.length));
  const results = await Promise.all(run.targets.map((target) => runOne(run, target, share)));
  const requests = results.reduce((sum, r) => sum + r.requests, 0);
  const failures = results.reduce((sum, r) => sum + r.unexpected + r.socketErrors + r.timeouts, 0);
  return {
    requests,
    requestsPerSecond: results.reduce((sum, r) => sum + r.requests / (r.durationUs / 1e6), 0),
    p50Ms: results.reduce((sum, r) => sum + r.p50Us * r.requests, 0) / Math.max(1, requests) / 1000,
    p99Ms: Math.max(...results.map((r) => r.p99Us)) / 1000,
    failures,
    failureDetail: results
      .map(
        (r) =>
          `${r.unexpected} unexpected statuses (first ones: ${r.unexpectedStatuses.trim() || 'none'}), ` +
          `${r.socketErrors} socket errors, ${r.timeouts} timeouts of ${r.requests} requests`,
      )
      .join('; '),
  };
}
