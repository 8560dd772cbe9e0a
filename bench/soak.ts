/**
 * npm run soak: holds about 80% of the service's measured maximum load for minutes, with a mix of
 * valid, unknown, revoked and malformed keys from rotating addresses, and prints once per interval
 * what could grow without bound: RSS, heap, open handles, /metrics series, idempotency rows. Ends
 * with the slope of each over the second half. See bench/README.md, "Soak". Everything it starts
 * is stopped at the end, on failure and on Ctrl-C; it talks to loopback only.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/config.js';
import { MINUTE_MS } from '../src/domain/clock.js';
import { IDEMPOTENCY_RETENTION_MS } from '../src/domain/pets/pet-service.js';
import { createServices, type Services } from '../src/services.js';
import { runCommand } from './command.js';
import { ensureWrk, runningWrk, runWrk, type WrkResult } from './load-runner.js';
import { cpuTicks, loadAverage, memory, openFiles, TICKS_PER_SECOND } from './proc.js';
import {
  createKey,
  postgresStorage,
  runningServers,
  type Server,
  seedPets,
  sqliteStorage,
  startService,
  type Storage,
} from './servers.js';
import type { SoakLoadConfig, SoakLoadReport } from './soak-load.js';

const LOAD_SCRIPT = fileURLToPath(new URL('./soak-load.js', import.meta.url));
const SOAK_SCRIPT = fileURLToPath(new URL('../../../bench/soak.lua', import.meta.url));
/** wrk connections of the paced load: enough that each waits several ms between requests. */
const SOAK_CONNECTIONS = 64;
/** Of the held rate, what the Node generator sends from other addresses than 127.0.0.1. */
const SIDE_SHARE = 0.05;

/** What bench/soak.lua's done() reports. */
interface SoakWrkResult extends WrkResult {
  /** Creates sent with a new Idempotency-Key. */
  idempotent: number;
}

interface Options {
  minutes: number;
  intervalSeconds: number;
  storage: 'sqlite' | 'postgres';
  pets: number;
  keys: number;
  newKeysPerMinute: number;
  share: number;
  maxSeconds: number;
  connections: number;
  rate: number | undefined;
  expiredRecords: number;
  hostileForwardedFor: boolean;
}

const USAGE = `Usage: npm run soak -- [options]

  --minutes N            how long to hold the load (default 10)
  --interval-seconds N   one line of figures this often (default 60)
  --storage S            sqlite (a temporary file, default) or postgres (PostgreSQL + Redis)
  --share F              of the measured maximum to hold (default 0.8)
  --max-seconds N        how long wrk measures the maximum of the mix (default 10)
  --connections N        wrk connections for the maximum (default 50)
  --rate N               hold N requests/s instead of measuring the maximum
  --pets N               pets seeded before the run (default 10000)
  --keys N               active keys created before the run (default 300; 20 more are revoked)
  --new-keys-per-minute N  keys created during the run, joining the rotation (default 30)
  --hostile-forwarded-for  the service runs with TRUST_PROXY=true, and every request (keyed or
                         not, wrk's and the generator's) carries a made-up X-Forwarded-For:
                         junk up to 12 KB (generator) or 4 KB (wrk), or a random IPv4 or IPv6
                         address, new each time (RSS must stay flat all the same)
  --expired-records N    idempotency records aged past retention, inserted before the start to
                         show the purge at work (default 5000)
`;

class UsageError extends Error {}

function number(name: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
    throw new UsageError(`${name} must be a number ${min}-${max} (got ${JSON.stringify(text)})`);
  }
  return value;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      minutes: { type: 'string', default: '10' },
      'interval-seconds': { type: 'string', default: '60' },
      storage: { type: 'string', default: 'sqlite' },
      share: { type: 'string', default: '0.8' },
      'max-seconds': { type: 'string', default: '10' },
      connections: { type: 'string', default: '50' },
      rate: { type: 'string' },
      pets: { type: 'string', default: '10000' },
      keys: { type: 'string', default: '300' },
      'new-keys-per-minute': { type: 'string', default: '30' },
      'expired-records': { type: 'string', default: '5000' },
      'hostile-forwarded-for': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  if (values.storage !== 'sqlite' && values.storage !== 'postgres') {
    throw new UsageError('--storage must be sqlite or postgres');
  }
  return {
    minutes: number('--minutes', values.minutes, 0.1, 24 * 60),
    intervalSeconds: number('--interval-seconds', values['interval-seconds'], 1, 3600),
    storage: values.storage,
    share: number('--share', values.share, 0.01, 1),
    maxSeconds: number('--max-seconds', values['max-seconds'], 1, 600),
    connections: Math.floor(number('--connections', values.connections, 1, 10_000)),
    rate: values.rate === undefined ? undefined : number('--rate', values.rate, 1, 1_000_000),
    pets: Math.floor(number('--pets', values.pets, 100, 100_000_000)),
    keys: Math.floor(number('--keys', values.keys, 1, 100_000)),
    newKeysPerMinute: number('--new-keys-per-minute', values['new-keys-per-minute'], 0, 100_000),
    expiredRecords: Math.floor(number('--expired-records', values['expired-records'], 0, 1e7)),
    hostileForwardedFor: values['hostile-forwarded-for'],
  };
}

const progress = (text: string) => process.stderr.write(`soak: ${text}\n`);

/** Set when SIGINT or SIGTERM stops the run: what fails afterwards is our own stopping. */
let stoppedBy: NodeJS.Signals | undefined;
const runningLoad = new Set<ChildProcess>();

/** What one interval shows; the columns of the table and the quantities of the verdict. */
interface Sample {
  minutes: number;
  rssMiB: number;
  heapMiB: number;
  fds: number;
  handles: number;
  reqPerSecond: number;
  p99Ms: number;
  errors: number;
  late: number;
  serverCores: number;
  idempotencyRows: number;
  expiredRows: number;
  series: number;
  deprecatedSeries: number;
  keys: number;
}

/** The quantities the verdict judges, with the growth over the second half that is noise. */
const WATCHED: ReadonlyArray<{ name: string; of: (s: Sample) => number; floor: number }> = [
  { name: 'RSS (MiB)', of: (s) => s.rssMiB, floor: 8 },
  { name: 'heapUsed (MiB)', of: (s) => s.heapMiB, floor: 8 },
  // Up to 64 wrk connections and 64 of the side generator come and go with the load.
  { name: 'open fds', of: (s) => s.fds, floor: 64 },
  { name: 'active handles', of: (s) => s.handles, floor: 64 },
  { name: '/metrics series', of: (s) => s.series, floor: 5 },
  { name: 'deprecated-call series', of: (s) => s.deprecatedSeries, floor: 2 },
  { name: 'idempotency rows', of: (s) => s.idempotencyRows, floor: 10 },
  { name: 'expired idempotency rows', of: (s) => s.expiredRows, floor: 10 },
  { name: 'p99 (ms)', of: (s) => s.p99Ms, floor: 20 },
];

/** Series in a Prometheus text exposition: every line that is not a comment or blank. */
function seriesOf(text: string, name?: string): number {
  let count = 0;
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    if (name === undefined || line.startsWith(`${name}{`) || line.startsWith(`${name} `)) {
      count += 1;
    }
  }
  return count;
}

function gauge(text: string, name: string): number {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : Number.NaN;
}

/** Least-squares slope of y over x. */
function slope(points: ReadonlyArray<{ x: number; y: number }>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

const HEADER = [
  'min',
  'RSS MiB',
  'heap MiB',
  'fds',
  'handles',
  'req/s',
  'p99 ms',
  'errors',
  'late',
  'cpu',
  'idem rows',
  'expired',
  'series',
  'depr.',
  'keys',
];

function row(s: Sample): string[] {
  return [
    s.minutes.toFixed(1),
    s.rssMiB.toFixed(1),
    s.heapMiB.toFixed(1),
    String(s.fds),
    String(s.handles),
    s.reqPerSecond.toFixed(0),
    s.p99Ms.toFixed(1),
    String(s.errors),
    String(s.late),
    s.serverCores.toFixed(2),
    String(s.idempotencyRows),
    String(s.expiredRows),
    String(s.series),
    String(s.deprecatedSeries),
    String(s.keys),
  ];
}

const line = (cells: string[]) => `| ${cells.map((c) => c.padStart(8)).join(' | ')} |`;

/** Creates keys through the service's own code on the same database, as `petstore keys create`. */
async function createKeys(services: Services, count: number, label: string): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    // Enterprise keys with limits far above the load: some 20 requests a second reach each key,
    // more than any other plan allows, and a 429 here would measure the limiter, not a leak.
    const created = await services.apiKeys.create({
      plan: 'enterprise',
      label,
      customLimits: { perMinute: 1_000_000, perDay: 1_000_000_000 },
    });
    keys.push(created.key);
  }
  return keys;
}

function verdict(samples: readonly Sample[], options: Options, idempotentPerMinute: number) {
  const half = samples.filter((s) => s.minutes >= options.minutes / 2);
  const out = [
    '',
    `Verdict: growth per minute over the second half (${half.length} samples from minute ` +
      `${half[0]?.minutes.toFixed(1) ?? '?'}); GROWS when it adds more than 5% of its level and ` +
      `more than the noise floor over that half.`,
    '',
    '| quantity | first | last | per minute (2nd half) | verdict |',
    '| :-- | --: | --: | --: | :-- |',
  ];
  const grows: string[] = [];
  for (const watched of WATCHED) {
    const values = half.map((s) => ({ x: s.minutes, y: watched.of(s) }));
    const perMinute = slope(values);
    const span = (half[half.length - 1]?.minutes ?? 0) - (half[0]?.minutes ?? 0);
    const level = Math.max(...values.map((v) => Math.abs(v.y)), 1);
    const added = perMinute * span;
    let judged = added > watched.floor && added > 0.05 * level ? 'GROWS' : 'flat';
    if (watched.name === 'idempotency rows' && judged === 'GROWS') {
      // Records are kept 24 hours: within a soak they may only grow, at the rate they are created.
      judged =
        `grows as expected: kept ${IDEMPOTENCY_RETENTION_MS / 3_600_000} h, ` +
        `${idempotentPerMinute.toFixed(0)} created a minute (plateau at rate × 24 h)`;
    } else if (judged === 'GROWS') {
      grows.push(watched.name);
    }
    const first = samples[0] ? watched.of(samples[0]) : Number.NaN;
    const last = samples[samples.length - 1]
      ? watched.of(samples[samples.length - 1] as Sample)
      : 0;
    out.push(
      `| ${watched.name} | ${first.toFixed(1)} | ${last.toFixed(1)} | ${perMinute.toFixed(2)} | ${judged} |`,
    );
  }
  out.push(
    '',
    grows.length === 0 ? 'Nothing grows without bound.' : `Keeps growing: ${grows.join(', ')}.`,
    '',
  );
  return out.join('\n');
}

function cleaner(
  dir: string,
  storage: () => Storage | undefined,
  services: () => Services | undefined,
) {
  let done: Promise<void> | undefined;
  return () =>
    (done ??= (async () => {
      for (const child of runningLoad) child.kill('SIGTERM');
      for (const child of runningWrk) child.kill('SIGTERM');
      await Promise.all([...runningServers].map((s) => s.stop()));
      try {
        await services()?.close();
      } catch (error) {
        progress(`could not close the soak's own connections: ${String(error)}`);
      }
      try {
        await storage()?.drop();
      } catch (error) {
        progress(`could not remove the soak's data: ${String(error)}`);
      }
      rmSync(dir, { recursive: true, force: true });
    })());
}

async function main(options: Options): Promise<void> {
  ensureWrk();
  const dir = mkdtempSync(join(tmpdir(), 'petstore-soak-'));
  let storage: Storage | undefined;
  let services: Services | undefined;
  const cleanup = cleaner(
    dir,
    () => storage,
    () => services,
  );
  const interrupted = (signal: NodeJS.Signals) => {
    stoppedBy = signal;
    progress(`${signal}: stopping everything the soak started`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  process.once('exit', () => {
    for (const child of runningLoad) child.kill('SIGKILL');
    for (const child of runningWrk) child.kill('SIGKILL');
    for (const server of runningServers) server.kill();
  });

  const loadAtStart = loadAverage();
  let server: Server | undefined;
  try {
    storage = options.storage === 'sqlite' ? sqliteStorage(dir) : await postgresStorage();
    const store = storage;
    progress(`storage: ${store.description}`);
    await seedPets(options.pets, store.env, progress);
    const benchKey = await createKey(store.env);
    const runTag = Date.now().toString(36);
    services = await createServices(loadConfig({ ...store.env, PORT: '8080' }), { migrate: true });
    const own = services;
    const keys = [benchKey, ...(await createKeys(own, options.keys - 1, 'soak'))];
    const revoked = await createKeys(own, 20, 'soak revoked');
    for (const record of (await own.apiKeys.list()).filter((r) => r.label === 'soak revoked')) {
      await own.keys.revoke(record.id, { kind: 'cli', user: 'soak', host: 'bench' });
    }
    progress(`${keys.length} active keys, ${revoked.length} revoked`);
    if (options.expiredRecords > 0) {
      // Records a day and an hour old, as a service running for a day would hold: the purge must
      // remove them (at most 10,000 a minute) while the soak runs.
      const createdAt = Date.now() - IDEMPOTENCY_RETENTION_MS - 3_600_000;
      await store.query(
        `INSERT INTO idempotency_keys (api_key_id, key, fingerprint, pet_id, created_at, locked_at)
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${options.expiredRecords})
         SELECT 'key_expired', 'expired-' || i, 'f', 1, ${createdAt}, ${createdAt} FROM n`,
      );
      progress(`${options.expiredRecords} idempotency records past retention inserted`);
    }
    await store.quiesce();

    const env = options.hostileForwardedFor ? { ...store.env, TRUST_PROXY: 'true' } : store.env;
    server = await startService('service', env, dir);
    const pid = server.pid;
    progress(`service pid ${pid} on ${server.url}`);

    const keysFile = join(dir, 'keys.txt');
    const soakWrk = (connections: number, seconds: number, delayMs: number, tag: string) => {
      writeFileSync(keysFile, `${keys.join('\n')}\n`);
      return runWrk<SoakWrkResult>({
        what: 'wrk (soak)',
        script: SOAK_SCRIPT,
        target: (server as Server).url,
        connections,
        durationSeconds: seconds,
        headers: [],
        scriptArgs: [
          String(options.pets),
          keysFile,
          delayMs.toFixed(3),
          `${runTag}-${tag}`,
          options.hostileForwardedFor ? 'hostile-forwarded-for' : '',
        ],
      });
    };

    let rate = options.rate;
    if (rate === undefined) {
      // The maximum of this very mix (a third of it writes), not of the bench's mostly cached one.
      const max = await soakWrk(options.connections, options.maxSeconds, 0, 'max');
      const maxRate = max.requests / (max.durationUs / 1e6);
      rate = Math.max(1, Math.round(maxRate * options.share));
      progress(
        `maximum (the soak's mix, no delay, ${options.connections} connections, ` +
          `${options.maxSeconds} s): ${maxRate.toFixed(0)} req/s, p99 ${(max.p99Us / 1000).toFixed(1)} ms; ` +
          `holding ${rate} req/s (${options.share * 100}%)`,
      );
    }

    // wrk sends the keyed bulk from 127.0.0.1; the Node generator the traffic from other addresses.
    const sideRate = Math.max(1, Math.round(rate * SIDE_SHARE));
    const wrkRate = rate - sideRate;
    const loadConfigJson: SoakLoadConfig = {
      target: server.url,
      ratePerSecond: sideRate,
      keys: keys.slice(1),
      revokedKeys: revoked,
      addresses: ['127.0.0.2', '127.0.0.3', '127.0.0.4'],
      requestsPerScannerAddress: 10,
      maxInFlight: 64,
      hostileForwardedFor: options.hostileForwardedFor,
    };
    const child = fork(LOAD_SCRIPT, [], {
      env: { ...process.env, SOAK_LOAD_CONFIG: JSON.stringify(loadConfigJson) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    runningLoad.add(child);
    let childGone: Error | undefined;
    child.once('exit', (code, signal) => {
      runningLoad.delete(child);
      childGone = new Error(`the load generator ended (${signal ?? code})`);
    });
    const sideReport = () =>
      new Promise<SoakLoadReport>((resolve, reject) => {
        if (childGone) {
          reject(childGone);
          return;
        }
        child.once('message', (report: SoakLoadReport) => resolve(report));
        child.send({ report: true });
      });

    const out = (text: string) => process.stdout.write(`${text}\n`);
    out(
      `# Soak: ${options.storage}, ${rate} req/s (${wrkRate} from wrk, ${sideRate} from other ` +
        `addresses) for ${options.minutes} min, a line every ${options.intervalSeconds} s ` +
        `(started ${new Date().toISOString()})`,
    );
    out('');
    out(line(HEADER));
    out(`|${HEADER.map(() => ' -------: ').join('|')}|`);

    const samples: Sample[] = [];
    const startedAt = performance.now();
    let ticksBefore = cpuTicks(pid);
    let idempotent = 0;
    let keysOwed = 0;
    let errorDetail: string[] = [];
    // A connection's period is its delay plus the answer's latency: start as if latency were 0,
    // then correct by what each interval achieved.
    let delayMs = (SOAK_CONNECTIONS * 1000) / wrkRate;
    await sideReport(); // the side generator's first figures start with the first interval
    for (let interval = 1; ; interval++) {
      const wrk = await soakWrk(
        SOAK_CONNECTIONS,
        options.intervalSeconds,
        delayMs,
        String(interval),
      );
      const side = await sideReport();
      const seconds = wrk.durationUs / 1e6;
      const wrkAchieved = wrk.requests / seconds;
      const overheadMs = (SOAK_CONNECTIONS * 1000) / Math.max(1, wrkAchieved) - delayMs;
      // Halfway to the correction each time, never below a fifth of the ideal delay: when the
      // machine is busy for a while (other jobs on it), a delay of 0 would turn the soak into a
      // closed loop at full load, and the next quiet interval would overshoot the target.
      const ideal = (SOAK_CONNECTIONS * 1000) / wrkRate;
      delayMs = Math.max(ideal / 5, (delayMs + Math.max(0, ideal - overheadMs)) / 2);

      const minutes = (performance.now() - startedAt) / MINUTE_MS;
      const ticks = cpuTicks(pid);
      const elapsed = options.intervalSeconds;
      const serverCores = (ticks - ticksBefore) / TICKS_PER_SECOND / elapsed;
      ticksBefore = ticks;
      const metrics = await fetch(`${server.url}/metrics`).then((r) => r.text());
      const rows = (await store.query('SELECT count(*) FROM idempotency_keys')) ?? 0;
      const cutoff = Date.now() - IDEMPOTENCY_RETENTION_MS;
      const expired =
        (await store.query(
          `SELECT count(*) FROM idempotency_keys WHERE created_at <= ${cutoff}`,
        )) ?? 0;
      idempotent += wrk.idempotent;
      const sample: Sample = {
        minutes,
        rssMiB: memory(pid).rssKiB / 1024,
        heapMiB: gauge(metrics, 'petstore_nodejs_heap_size_used_bytes') / 2 ** 20,
        fds: openFiles(pid),
        handles: gauge(metrics, 'petstore_nodejs_active_handles_total'),
        reqPerSecond: wrkAchieved + side.answered / seconds,
        p99Ms: Math.max(wrk.p99Us / 1000, side.p99Ms),
        errors: wrk.unexpected + wrk.socketErrors + wrk.timeouts + side.errors,
        late: side.late,
        serverCores,
        idempotencyRows: rows,
        expiredRows: expired,
        series: seriesOf(metrics),
        deprecatedSeries: seriesOf(metrics, 'petstore_deprecated_operation_calls_total'),
        keys: keys.length,
      };
      // Emptied each interval, so that a soak run at LOG_LEVEL=debug cannot fill the disk.
      truncateSync(server.logPath, 0);
      samples.push(sample);
      out(line(row(sample)));
      if (wrk.unexpected > 0) errorDetail = [`wrk statuses ${wrk.unexpectedStatuses.trim()}`];
      if (side.errorDetail.length > 0) errorDetail = side.errorDetail;
      if (minutes >= options.minutes) break;
      // New customers' keys, used from the next interval on.
      keysOwed += (options.newKeysPerMinute * options.intervalSeconds) / 60;
      const due = Math.floor(keysOwed);
      if (due > 0) {
        keysOwed -= due;
        const added = await createKeys(own, due, 'soak new');
        keys.push(...added);
        child.send({ addKeys: added });
      }
    }
    child.kill('SIGTERM');
    const statuses = samples.length;
    const idempotentPerMinute = idempotent / Math.max(1e-9, samples[statuses - 1]?.minutes ?? 1);
    out(verdict(samples, options, idempotentPerMinute));
    if (errorDetail.length > 0) out(`Last unexpected answers: ${errorDetail.join('; ')}`);
    out(`Load average (1, 5, 15 min) at start ${loadAtStart}, at end ${loadAverage()}.`);
  } catch (error) {
    if (server) {
      const said = readFileSync(server.errPath, 'utf8').trim();
      if (said !== '') progress(`service stderr:\n${said.split('\n').slice(-15).join('\n')}`);
    }
    throw error;
  } finally {
    await cleanup();
  }
}

runCommand('soak', USAGE, parseOptions, main, () => stoppedBy !== undefined);
