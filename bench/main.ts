/**
 * npm run bench: the service against a bare node:http baseline serving the same bytes, scenario by
 * scenario, A B A B over several rounds, with wrk; prints the medians and the service/baseline
 * ratios. See bench/README.md. Everything it starts is stopped at the end, on failure and on Ctrl-C.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/config.js';
import { encodeCursor } from '../src/domain/pets/cursor.js';
import { createServices } from '../src/services.js';
import { horizonLagMsFor } from '../src/storage/postgres/postgres-storage.js';
import { runCommand } from './command.js';
import {
  type DependencyCpu,
  dependencyCpu,
  type DependencyTicks,
  dependencyTicksBetween,
} from './dependency-cpu.js';
import { type Cores, pinnedCores } from './cores.js';
import { checkFidelity } from './fidelity.js';
import { describeProfiles } from './profile-summary.js';
import {
  ensureWrk,
  isScenario,
  type LoadResult,
  runLoad,
  runningWrk,
  type Scenario,
  SCENARIOS,
} from './load-runner.js';
import {
  cpuModel,
  cpuTicks,
  exitedChildrenTicks,
  loadAverage,
  machineBusyTicks,
  memory,
  TICKS_PER_SECOND,
} from './proc.js';
import { describeMeasurement, type Measurement, type Side, summarize, table } from './report.js';
import {
  createKey,
  KEY_LIMITS,
  POSTGRES_URL,
  postgresStorage,
  REDIS_URL,
  ROOT,
  runningServers,
  seedPets,
  type Server,
  sqliteStorage,
  startBaseline,
  startService,
  type Storage,
} from './servers.js';

/** More unexpected answers than this share of the requests fails the run. */
const MAX_FAILURE_SHARE = 0.001;
/** list-cursor starts its walks at the first page and at this many deep pages. */
const CURSOR_STARTS = 64;
const PAGE = 20;
/** The service's DATABASE_STATEMENT_TIMEOUT_MS, which the bench leaves at its default. */
const DEFAULT_STATEMENT_TIMEOUT_MS = 5_000;

export interface Options {
  scenarios: Scenario[];
  rounds: number;
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  pets: number;
  storage: 'sqlite' | 'postgres';
  instances: 1 | 2;
  /** Distinct keys the requests are spread over; 1: every request carries the same key. */
  keys: number;
  /** A folder for CPU profiles of the service processes (node --cpu-prof), summarized at the end. */
  profile: string | undefined;
  /** --rate: requests a second each wrk process (one per instance) paces itself to; else flat out. */
  rate: number | undefined;
  /** --checkout: the folder of the (built) service measured; this checkout by default. */
  checkout: string;
  /**
   * --against: the folder of a (built) service that takes the baseline's place, on data of its
   * own; undefined: the bare node:http baseline.
   */
  against: string | undefined;
  /** --pin: the servers on the last core, wrk on the others (cores.ts); else anywhere. */
  cores: { servers: Cores; load: Cores };
}

const USAGE = `Usage: npm run bench -- [options]

  --scenarios a,b     some of ${SCENARIOS.join(', ')} (default: all)
  --rounds N          A B rounds per scenario; medians are over them (default 3)
  --duration 10s      measured time per scenario, round and side (default 10s)
  --warmup 2s         unmeasured load just before each measurement (default 2s)
  --connections N     wrk connections, split among instances (default 50)
  --pets N            pets seeded before the run (default 10000; 10000000 works, seeding takes long)
  --storage S         sqlite (a temporary file, default) or postgres (PostgreSQL + Redis)
  --instances N       1 (default) or 2 service processes (postgres only), one wrk each
  --keys N            spread the requests over N keys instead of one (default 1), e.g. 2000
  --rate N            pace each wrk process (one per instance) to about N requests a second
                      instead of as fast as answers come, so that one and two instances are
                      compared at the same load per instance (default: flat out)
  --profile DIR       CPU-profile the service processes into DIR (node --cpu-prof) and print
                      where their time went; profile one scenario at a time to read it
  --pin               run the service and the baseline on the last core and wrk on the others
                      (taskset), so that a measurement does not depend on where the scheduler
                      put them
  --checkout DIR      measure the service built in DIR (another clone, \`npm ci\` done there)
                      against this checkout's baseline, seeded and keyed by DIR's own CLI: two
                      versions compare through the same bench and the same baseline
  --against DIR       put the service built in DIR in the baseline's place (SQLite, one key,
                      seeded and keyed by DIR's own CLI): each round measures the two versions
                      back to back, so the round ratios compare them directly
`;

function seconds(name: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)(s|m)?$/.exec(text);
  if (!match) throw new UsageError(`${name} must be like 10s or 1m (got ${JSON.stringify(text)})`);
  const value = Number(match[1]) * (match[2] === 'm' ? 60 : 1);
  if (value <= 0) throw new UsageError(`${name} must be more than 0`);
  return value;
}

function count(name: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new UsageError(`${name} must be an integer ${min}-${max} (got ${JSON.stringify(text)})`);
  }
  return Number(text);
}

class UsageError extends Error {}

/** --checkout's or --against's folder, which must hold a built service. */
function builtServiceIn(option: string, path: string): string {
  const folder = resolve(path);
  if (!existsSync(join(folder, 'dist/main.js')) || !existsSync(join(folder, 'dist/cli/main.js'))) {
    throw new UsageError(`${option} ${path}: no dist/main.js there (run npm ci in it first)`);
  }
  return folder;
}

export function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      scenarios: { type: 'string', default: SCENARIOS.join(',') },
      rounds: { type: 'string', default: '3' },
      duration: { type: 'string', default: '10s' },
      warmup: { type: 'string', default: '2s' },
      connections: { type: 'string', default: '50' },
      pets: { type: 'string', default: '10000' },
      storage: { type: 'string', default: 'sqlite' },
      instances: { type: 'string', default: '1' },
      keys: { type: 'string', default: '1' },
      profile: { type: 'string' },
      rate: { type: 'string' },
      pin: { type: 'boolean', default: false },
      checkout: { type: 'string' },
      against: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const scenarios = values.scenarios.split(',').map((s) => s.trim());
  const unknown = scenarios.filter((s) => !isScenario(s));
  if (unknown.length > 0 || scenarios.length === 0) {
    throw new UsageError(`unknown scenario ${unknown.join(', ')}: use ${SCENARIOS.join(', ')}`);
  }
  if (values.storage !== 'sqlite' && values.storage !== 'postgres') {
    throw new UsageError('--storage must be sqlite or postgres');
  }
  const instances = count('--instances', values.instances, 1, 2) as 1 | 2;
  if (instances === 2 && values.storage !== 'postgres') {
    throw new UsageError(
      '--instances 2 needs --storage postgres: instances share PostgreSQL and Redis',
    );
  }
  const keys = count('--keys', values.keys, 1, 100_000);
  if (values.against !== undefined && (values.storage !== 'sqlite' || keys !== 1)) {
    // Each side needs data of its own (two releases' migrations differ): one SQLite file each.
    throw new UsageError('--against works with --storage sqlite and one key (--keys 1)');
  }
  const connections = count('--connections', values.connections, 1, 10_000);
  if (connections < instances) throw new UsageError('--connections must be at least --instances');
  return {
    scenarios: scenarios.filter(isScenario),
    rounds: count('--rounds', values.rounds, 1, 100),
    durationSeconds: seconds('--duration', values.duration),
    warmupSeconds: seconds('--warmup', values.warmup),
    connections,
    pets: count('--pets', values.pets, PAGE * 2, 100_000_000),
    storage: values.storage,
    instances,
    keys,
    profile: values.profile === undefined ? undefined : resolve(values.profile),
    rate: values.rate === undefined ? undefined : count('--rate', values.rate, 1, 1_000_000),
    checkout: values.checkout === undefined ? ROOT : builtServiceIn('--checkout', values.checkout),
    against: values.against === undefined ? undefined : builtServiceIn('--against', values.against),
    cores: values.pin ? pinnedCores() : { servers: undefined, load: undefined },
  };
}

/** Set when SIGINT or SIGTERM stops the run: what fails afterwards is our own stopping. */
let stoppedBy: NodeJS.Signals | undefined;

const progress = (text: string) => process.stderr.write(`bench: ${text}\n`);
const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;

/**
 * The last page of the sold pets: a cursor 60 pets before the newest leaves about 10 to list, so the
 * page is never full, never kept in memory, and its query runs every time, at any data size.
 */
function lastPage(pets: number): string {
  return `/v1/pets?limit=${PAGE}&status=sold&cursor=${encodeCursor(Math.max(0, pets - 60), 'sold')}`;
}

/**
 * On PostgreSQL a page is kept in memory only once every id on it is below the id horizon, which the service
 * can tell only a while after it began watching the ids (src/storage/postgres/postgres-id-horizon.ts):
 * measuring before then would measure a service that reads every page from the database, which is
 * what a fresh instance does for its first minute, not its steady state.
 */
async function waitForIdHorizon(readyAt: number): Promise<void> {
  const lagMs = horizonLagMsFor(DEFAULT_STATEMENT_TIMEOUT_MS) + 2_000;
  const left = readyAt + lagMs - performance.now();
  if (left <= 0) return;
  progress(
    `waiting ${(left / 1000).toFixed(0)} s more for the id horizon to pass the first ids (PostgreSQL)`,
  );
  await new Promise((resolve) => setTimeout(resolve, left));
}

/** Where list-cursor walks start: the first page, and deep pages spread over all the pets. */
function cursorStarts(pets: number): string[] {
  const starts = [`/v1/pets?limit=${PAGE}`];
  for (let i = 1; i <= CURSOR_STARTS; i++) {
    const afterId = Math.floor(((pets - PAGE) * i) / CURSOR_STARTS);
    starts.push(`/v1/pets?limit=${PAGE}&cursor=${encodeCursor(afterId, undefined)}`);
  }
  return starts;
}

function failIfUnexpected(what: string, result: LoadResult): void {
  if (result.requests === 0) throw new Error(`${what}: no request completed`);
  if (result.failures > result.requests * MAX_FAILURE_SHARE) {
    throw new Error(
      `${what}: ${result.failures} of ${result.requests} requests failed ` +
        `(over ${MAX_FAILURE_SHARE * 100}%): ${result.failureDetail}`,
    );
  }
}

interface Run {
  options: Options;
  /** The key each side's requests carry: the same one, but with --against. */
  keys: Record<Side, string>;
  keysFile: string | undefined;
  dependencies: DependencyCpu | undefined;
  servers: Record<Side, Server[]>;
  startPaths: string[];
}

function load(run: Run, scenario: Scenario, side: Side, durationSeconds: number) {
  return runLoad({
    scenario,
    targets: run.servers[side].map((s) => s.url),
    connections: run.options.connections,
    durationSeconds,
    key: run.keys[side],
    keysFile: run.keysFile,
    pets: run.options.pets,
    startPaths: run.startPaths,
    ratePerTarget: run.options.rate,
    cores: run.options.cores.load,
  });
}

const emptyLogs = (servers: readonly Server[]) =>
  servers.forEach((s) => truncateSync(s.logPath, 0));

/** Unmeasured load; fails like a measurement when answers are not the expected ones. */
async function warmUp(run: Run, scenario: Scenario, side: Side): Promise<void> {
  const result = await load(run, scenario, side, run.options.warmupSeconds);
  emptyLogs(run.servers[side]);
  failIfUnexpected(`${scenario} warm-up on the ${side}`, result);
}

async function measure(run: Run, scenario: Scenario, side: Side, round: number) {
  const { options } = run;
  const servers = run.servers[side];
  await warmUp(run, scenario, side);

  const serverTicks = () => servers.reduce((sum, s) => sum + cpuTicks(s.pid), 0);
  const dependenciesBefore: DependencyTicks | undefined = await run.dependencies?.sample();
  const before = { server: serverTicks(), wrk: exitedChildrenTicks(), machine: machineBusyTicks() };
  const started = performance.now();
  const result = await load(run, scenario, side, options.durationSeconds);
  const wall = (performance.now() - started) / 1000;
  const server = serverTicks() - before.server;
  const dependenciesAfter = await run.dependencies?.sample();
  const dependencies =
    dependenciesBefore && dependenciesAfter
      ? dependencyTicksBetween(dependenciesBefore, dependenciesAfter)
      : undefined;
  const usPerRequest = (ticks: number) => ((ticks / TICKS_PER_SECOND) * 1e6) / result.requests;
  const wrk = exitedChildrenTicks() - before.wrk;
  const machine = machineBusyTicks() - before.machine;
  emptyLogs(servers);
  failIfUnexpected(`${scenario} on the ${side}, round ${round}`, result);
  const cores = (ticks: number) => ticks / TICKS_PER_SECOND / wall;
  const measurement: Measurement = {
    scenario,
    round,
    side,
    requests: result.requests,
    requestsPerSecond: result.requestsPerSecond,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    cpuUsPerRequest: usPerRequest(server),
    ...(dependencies && {
      redisUsPerRequest: usPerRequest(dependencies.redis),
      postgresUsPerRequest: usPerRequest(dependencies.postgres),
    }),
    wrkCores: cores(wrk),
    otherCores: Math.max(0, cores(machine - server - wrk)),
  };
  progress(describeMeasurement(measurement));
  return measurement;
}

function rss(servers: Record<Side, Server[]>): string[] {
  return (['service', 'baseline'] as const).flatMap((side) =>
    servers[side].map((s) => {
      const m = memory(s.pid);
      return `${s.label}: RSS ${mib(m.rssKiB)} (peak ${mib(m.peakKiB)})`;
    }),
  );
}

/** Stops whatever is still running, removes what was created. Safe to call more than once. */
function cleaner(
  dir: string,
  storage: () => Storage | undefined,
  dependencies: () => DependencyCpu | undefined,
) {
  let done: Promise<void> | undefined;
  return () =>
    (done ??= (async () => {
      for (const child of runningWrk) child.kill('SIGTERM');
      await Promise.all([...runningServers].map((s) => s.stop()));
      await dependencies()
        ?.close()
        .catch(() => undefined);
      try {
        await storage()?.drop();
      } catch (error) {
        progress(`could not remove the benchmark's data: ${String(error)}`);
      }
      rmSync(dir, { recursive: true, force: true });
    })());
}

/**
 * --keys: keys beside the CLI's, made through the service's own code on the same database (as
 * `petstore keys create`, without a process each), with the same limits; writes all of them to a
 * file for wrk and the baseline.
 */
async function createMoreKeys(storage: Storage, first: string, count: number, dir: string) {
  const services = await createServices(loadConfig({ ...storage.env, PORT: '8080' }), {
    migrate: false,
  });
  const keys = [first];
  try {
    while (keys.length < count) {
      const created = await services.apiKeys.create({
        plan: 'enterprise',
        label: 'npm run bench',
        customLimits: { ...KEY_LIMITS },
      });
      keys.push(created.key);
    }
  } finally {
    await services.close();
  }
  const path = join(dir, 'keys.txt');
  writeFileSync(path, `${keys.join('\n')}\n`);
  progress(`${count.toLocaleString('en')} keys`);
  return path;
}

async function main(options: Options): Promise<void> {
  const startedAt = performance.now();
  ensureWrk();
  const dir = mkdtempSync(join(tmpdir(), 'petstore-bench-'));
  let storage: Storage | undefined;
  let dependencies: DependencyCpu | undefined;
  const cleanup = cleaner(
    dir,
    () => storage,
    () => dependencies,
  );
  const interrupted = (signal: NodeJS.Signals) => {
    stoppedBy = signal;
    progress(`${signal}: stopping everything the benchmark started`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  // Last resort if the process ends another way: no server outlives the benchmark.
  process.once('exit', () => {
    for (const child of runningWrk) child.kill('SIGKILL');
    for (const server of runningServers) server.kill();
  });

  const loadAtStart = loadAverage();
  try {
    storage = options.storage === 'sqlite' ? sqliteStorage(dir) : await postgresStorage();
    progress(`storage: ${storage.description}`);
    progress(`seeding ${options.pets.toLocaleString('en')} pets`);
    const seedSeconds = await seedPets(options.pets, storage.env, progress, options.checkout);
    progress(`seeded in ${seedSeconds.toFixed(1)} s`);
    const key = await createKey(storage.env, options.checkout);
    // --against: the other version's service, on a SQLite file of its own that its own CLI seeds.
    const against = options.against;
    let againstSide: { storage: Storage; key: string } | undefined;
    if (against !== undefined) {
      const againstDir = join(dir, 'against');
      mkdirSync(againstDir);
      const againstStorage = sqliteStorage(againstDir);
      await seedPets(options.pets, againstStorage.env, progress, against);
      againstSide = { storage: againstStorage, key: await createKey(againstStorage.env, against) };
      progress(`the baseline's place: the service of ${against}, ${againstStorage.description}`);
    }
    const keysFile =
      options.keys > 1 ? await createMoreKeys(storage, key, options.keys, dir) : undefined;
    await storage.quiesce();
    if (storage.applicationName !== undefined) {
      dependencies = await dependencyCpu({
        postgresUrl: POSTGRES_URL,
        redisUrl: REDIS_URL,
        applicationName: storage.applicationName,
      });
    }

    const servers: Record<Side, Server[]> = { baseline: [], service: [] };
    for (let i = 0; i < options.instances; i++) {
      const suffix = options.instances > 1 ? ` ${i + 1}` : '';
      const profiling = options.profile ? ['--cpu-prof', `--cpu-prof-dir=${options.profile}`] : [];
      servers.service.push(
        await startService(`service${suffix}`, storage.env, dir, profiling, {
          checkout: options.checkout,
          cores: options.cores.servers,
        }),
      );
      servers.baseline.push(
        againstSide !== undefined
          ? await startService('against', againstSide.storage.env, dir, [], {
              checkout: against,
              cores: options.cores.servers,
            })
          : await startBaseline(
              `baseline${suffix}`,
              {
                seeded: options.pets,
                key,
                ...(keysFile !== undefined && { keysFile }),
                ...KEY_LIMITS,
                firstId: i + 1,
                idStep: options.instances,
              },
              dir,
              options.cores.servers,
            ),
      );
    }
    const readyAt = performance.now();
    const idle = rss(servers);
    const [baseline0, service0] = [servers.baseline[0], servers.service[0]];
    // Two versions of the service may answer differently on purpose: only the bare baseline is
    // held to answering as the service does.
    const mismatches =
      baseline0 && service0 && againstSide === undefined
        ? await checkFidelity([baseline0.url, service0.url], key)
        : [];
    for (const problem of mismatches) progress(`WARNING baseline differs: ${problem}`);
    if (mismatches.length === 0 && againstSide === undefined) {
      progress('the baseline answers as the service does (5 requests)');
    }

    const run: Run = {
      options,
      keys: { service: key, baseline: againstSide?.key ?? key },
      keysFile,
      dependencies,
      servers,
      startPaths: [...cursorStarts(options.pets), lastPage(options.pets)],
    };
    // The first measurement of a fresh process would pay for its JIT compilation: every scenario
    // runs once on every server before round 1.
    progress(`priming: every scenario for ${options.warmupSeconds} s on each side`);
    for (const scenario of options.scenarios) {
      for (const side of ['baseline', 'service'] as const) await warmUp(run, scenario, side);
    }
    if (options.storage === 'postgres') await waitForIdHorizon(readyAt);
    const measurements: Measurement[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      // Odd rounds measure the baseline first, even rounds the service first: what the machine
      // does just before or after a measurement falls on both sides alike.
      const order =
        round % 2 === 1 ? (['baseline', 'service'] as const) : (['service', 'baseline'] as const);
      for (const scenario of options.scenarios) {
        for (const side of order) {
          measurements.push(await measure(run, scenario, side, round));
        }
      }
    }
    const after = rss(servers);
    const minutes = (performance.now() - startedAt) / 60_000;

    const out = [
      `## ${options.storage === 'sqlite' ? 'SQLite' : 'PostgreSQL + Redis'}, ` +
        `${options.instances} instance${options.instances > 1 ? 's' : ''}, ` +
        `${options.pets.toLocaleString('en')} pets (${new Date().toISOString().slice(0, 10)})`,
      '',
      `${cpuModel()}, ${availableParallelism()} cores, Node ${process.version}; ` +
        `wrk 1 thread${options.instances > 1 ? ' per instance' : ''}, ${options.connections} connections, ` +
        `${options.durationSeconds} s per measurement after ${options.warmupSeconds} s warm-up, ` +
        `median of ${options.rounds} rounds; ` +
        `${options.rate === undefined ? '' : `paced to ${options.rate.toLocaleString('en')} req/s per wrk process; `}` +
        `${options.keys === 1 ? 'one key' : `${options.keys.toLocaleString('en')} keys, one per request in turn`}; ` +
        `service LOG_LEVEL ${process.env.LOG_LEVEL ?? 'unset (info)'}` +
        `${options.checkout === ROOT ? '' : `; service of ${options.checkout}`}` +
        `${against === undefined ? '' : `; in the baseline's place the service of ${against}`}` +
        `${options.cores.servers === undefined ? '' : `; servers on core ${options.cores.servers}, wrk on ${options.cores.load}`}.`,
      `Load average (1, 5, 15 min) at start ${loadAtStart}, at end ${loadAverage()}. ` +
        `Seeding took ${seedSeconds.toFixed(1)} s. The run took ${minutes.toFixed(1)} min.`,
      '',
      table(summarize(options.scenarios, measurements), dependencies !== undefined),
      '',
      `Memory after start, idle: ${idle.join('; ')}.`,
      `Memory after the run: ${after.join('; ')}.`,
      ...(mismatches.length > 0
        ? [
            '',
            `WARNING: the baseline does not answer like the service (${mismatches.length} differences; see above).`,
          ]
        : []),
      '',
    ];
    process.stdout.write(out.join('\n'));
    if (options.profile !== undefined) {
      // A process writes its profile when it exits.
      await Promise.all(servers.service.map((server) => server.stop()));
      process.stdout.write(
        `\nCPU profiles in ${options.profile}:\n\n${describeProfiles(options.profile)}`,
      );
    }
  } catch (error) {
    // What the servers said on stderr is the first thing to read when the run fails.
    for (const server of stoppedBy ? [] : runningServers) {
      const said = readFileSync(server.errPath, 'utf8').trim();
      if (said !== '')
        progress(`${server.label} stderr:\n${said.split('\n').slice(-15).join('\n')}`);
    }
    throw error;
  } finally {
    await cleanup();
  }
}

runCommand('bench', USAGE, parseOptions, main, () => stoppedBy !== undefined);
