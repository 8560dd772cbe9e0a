import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { call, codeOf, createKeyWithCli, Instances, sleep } from '../helpers/instances.js';
import { postgresFor, usePostgresSchemas } from '../helpers/postgres.js';
import { eventually, PrivateRedis } from '../helpers/redis.js';
import { freePort, type ServerProcess, tempDatabaseUrl } from '../helpers/server-process.js';
import { requireService } from '../helpers/services.js';
import {
  alertRules,
  dashboardExprs,
  metricNames,
  namedMetrics,
  requirePrometheus,
  RULES_FILE,
  withVariables,
} from './observability.js';

/*
 * A real Prometheus (Debian's binary, on a loopback port and a data folder of its own, scraping
 * every second) scrapes two running instances: one on PostgreSQL + Redis, one on SQLite, after
 * real traffic that includes 4xx, a 429, a ban, a Redis command that times out (so a 503) and
 * connections refused over the per-address cap. Then every metric the dashboard and the alert
 * rules name must have samples in Prometheus, every dashboard expression must evaluate through
 * /api/v1/query, and every alert rule must have been evaluated by Prometheus without error.
 */
const SUITE =
  'a real Prometheus scraping the service: the dashboard and the rules read real series';
const JOB = 'petstore';
const available =
  requirePrometheus(SUITE, ['prometheus']) &&
  (await postgresFor(SUITE)) &&
  (await requireService('redis', SUITE));

interface QueryAnswer {
  status: string;
  error?: string;
  data?: { resultType: string; result: { metric: Record<string, string> }[] };
}

/** The Prometheus of this file: started in a temporary folder, killed when the file ends. */
class PrivatePrometheus {
  private output = '';
  private readonly killOnExit = () => this.child.kill('SIGKILL');
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    private readonly dir: string,
  ) {
    process.once('exit', this.killOnExit);
    const keep = (chunk: Buffer) => (this.output = (this.output + chunk.toString()).slice(-5_000));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  static async start(targets: readonly string[]): Promise<PrivatePrometheus> {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-prometheus-'));
    const config = {
      global: { scrape_interval: '1s', evaluation_interval: '1s', scrape_timeout: '1s' },
      rule_files: [RULES_FILE],
      scrape_configs: [{ job_name: JOB, static_configs: [{ targets }] }],
    };
    writeFileSync(join(dir, 'prometheus.yml'), stringify(config));
    const port = await freePort();
    const child = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const prometheus = new PrivatePrometheus(child, `http://127.0.0.1:${port}`, dir);
    await eventually(
      'Prometheus answers /-/ready',
      async () => (await fetch(`${prometheus.url}/-/ready`)).ok,
      30_000,
      200,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${prometheus.output}`);
    });
    return prometheus;
  }

  async query(expr: string): Promise<QueryAnswer> {
    const url = `${this.url}/api/v1/query?query=${encodeURIComponent(expr)}`;
    const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    return (await res.json()) as QueryAnswer;
  }

  /** The metric names that have a sample now, among those of the service and `up`. */
  async namesWithSamples(): Promise<Set<string>> {
    const answer = await this.query(`count by (__name__) ({__name__=~"petstore_.+|up"})`);
    return new Set((answer.data?.result ?? []).map((r) => r.metric.__name__ ?? ''));
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    process.off('exit', this.killOnExit);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Where the instance serves /metrics: its operations listener (OPS_PORT) when it answers there,
 * else the public port (a build without the operations listener ignores OPS_PORT).
 */
async function metricsTarget(server: ServerProcess, opsPort: number): Promise<string> {
  const ops = await fetch(`http://127.0.0.1:${opsPort}/metrics`).catch(() => undefined);
  return ops?.ok === true ? `127.0.0.1:${opsPort}` : new URL(server.url).host;
}

/** Opens `count` connections at once and holds them a moment; some are refused over the cap. */
async function crowd(url: string, count: number): Promise<void> {
  const { hostname, port } = new URL(url);
  const sockets: Socket[] = [];
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve) => {
          const socket = connect(Number(port), hostname, () => resolve());
          socket.once('error', () => resolve());
          socket.once('close', () => resolve());
          sockets.push(socket);
        }),
    ),
  );
  await sleep(300);
  for (const socket of sockets) socket.destroy();
}

describe.runIf(available)(SUITE, () => {
  const schemas = usePostgresSchemas();
  const instances = new Instances();
  let redis: PrivateRedis;
  let prometheus: PrivatePrometheus;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    const sharedEnv = { DATABASE_URL: schemas.url, REDIS_URL: redis.url };
    const sqliteEnv = { DATABASE_URL: tempDatabaseUrl() };
    const [shared, embedded] = await Promise.all([
      (async () => {
        const opsPort = await freePort();
        const server = await instances.startOne({
          ...sharedEnv,
          OPS_PORT: String(opsPort),
          OPS_HOST: '127.0.0.1',
          PETSTORE_BAN_AFTER: '1',
          PETSTORE_BAN_SECONDS: '60',
          REDIS_COMMAND_TIMEOUT_MS: '300',
        });
        return { server, opsPort };
      })(),
      (async () => {
        const opsPort = await freePort();
        const server = await instances.startOne({
          ...sqliteEnv,
          OPS_PORT: String(opsPort),
          OPS_HOST: '127.0.0.1',
          MAX_CONNECTIONS_PER_ADDRESS: '24',
        });
        return { server, opsPort };
      })(),
    ]);

    // PostgreSQL + Redis: every kind of answer, then a 429 and a ban, then a Redis timeout.
    const { key } = await createKeyWithCli(sharedEnv, ['--plan', 'pro']);
    const { key: tight } = await createKeyWithCli(sharedEnv, [
      '--plan',
      'enterprise',
      '--per-minute',
      '2',
      '--per-day',
      '1000',
    ]);
    const url = shared.server.url;
    const created = await call(`${url}/v1/pets`, { key, body: { name: 'Scrape', categoryId: 1 } });
    expect(created.status).toBe(201);
    const id = (created.body as { id: number }).id;
    for (const [path, status] of [
      ['/v1/pets?limit=5', 200],
      [`/v1/pets/${id}`, 200],
      ['/v1/pets/999999999', 404],
      ['/v1/pets?limit=0', 400],
    ] as const) {
      expect((await call(`${url}${path}`, { key })).status, path).toBe(status);
    }
    expect((await call(`${url}/v1/pets`)).status).toBe(401);
    // The minute may turn over between the requests; then the burst starts again.
    let banned = false;
    for (let i = 0; i < 30 && !banned; i++) {
      banned = codeOf(await call(`${url}/v1/pets?limit=1`, { key: tight })) === 'api_key_banned';
    }
    expect(banned).toBe(true);
    redis.pause();
    try {
      expect((await call(`${url}/v1/pets?limit=1`, { key })).status).toBe(503);
      expect((await call(`${url}/readyz`)).status).toBe(503);
    } finally {
      redis.resume();
    }
    await eventually(
      'the instance is ready again',
      async () => (await call(`${url}/readyz`)).status === 200,
    );

    // SQLite: creates sent together share commits; connections over the per-address cap.
    const sqliteKey = (await createKeyWithCli(sqliteEnv, ['--plan', 'pro'])).key;
    const creates = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(`${embedded.server.url}/v1/pets`, {
          key: sqliteKey,
          body: { name: `Group ${i}`, categoryId: 1 },
        }),
      ),
    );
    expect(creates.map((c) => c.status)).toEqual(creates.map(() => 201));
    await crowd(embedded.server.url, 40);

    prometheus = await PrivatePrometheus.start([
      await metricsTarget(shared.server, shared.opsPort),
      await metricsTarget(embedded.server, embedded.opsPort),
    ]);
    // Three scrapes of each target, so that rate() over them has samples to work with.
    await eventually(
      'both targets scraped three times',
      async () => {
        const scrapes = await prometheus.query(`count_over_time(up{job="${JOB}"}[1m]) >= 3`);
        return scrapes.data?.result.length === 2;
      },
      30_000,
      500,
    );
  }, 120_000);

  afterAll(async () => {
    await prometheus?.stop();
    await instances.stop();
    await redis?.kill();
  });

  it('has samples in Prometheus of every metric the dashboard and the alert rules name', async () => {
    const wanted = namedMetrics();
    let missing = wanted;
    // Both targets scraped a few times (every second): rate() then has two samples or more.
    await eventually(
      'every named metric scraped',
      async () => {
        const present = await prometheus.namesWithSamples();
        missing = wanted.filter((name) => !present.has(name));
        return missing.length === 0;
      },
      20_000,
      1_000,
    ).catch(() => undefined);
    expect(
      missing,
      `named by the dashboard or the rules but not exported: ${missing.join(', ')}`,
    ).toEqual([]);
    const up = await prometheus.query(`up{job="${JOB}"} == 1`);
    expect(up.data?.result.length).toBe(2);
  });

  it('evaluates every dashboard expression through /api/v1/query, with a result', async () => {
    const present = await prometheus.namesWithSamples();
    const failed: string[] = [];
    const empty: string[] = [];
    for (const { panel, expr } of dashboardExprs()) {
      const answer = await prometheus.query(withVariables(expr, JOB));
      if (answer.status !== 'success') failed.push(`${panel}: ${answer.error ?? answer.status}`);
      // An expression whose metrics all have samples must select some: a label misspelled in a
      // matcher or a `by` would select nothing.
      else if (
        answer.data?.result.length === 0 &&
        metricNames(expr).every((name) => present.has(name))
      ) {
        empty.push(`${panel}: ${expr}`);
      }
    }
    expect({ failed, empty }).toEqual({ failed: [], empty: [] });
  });

  it('groups only by labels that the series it reads carry', async () => {
    const present = await prometheus.namesWithSamples();
    const exprs = [
      ...dashboardExprs().map((e) => ({ where: e.panel, expr: e.expr })),
      ...alertRules().map((rule) => ({ where: rule.alert, expr: rule.expr })),
    ];
    const unknown: string[] = [];
    for (const { where, expr } of exprs) {
      const names = [...new Set(metricNames(expr))];
      // Metrics not exported yet are reported by the first test; a label is looked for on the rest.
      if (!names.every((name) => present.has(name))) continue;
      const labels = new Set(
        [...expr.matchAll(/\bby \(([^)]*)\)/g)].flatMap((m) => (m[1] ?? '').split(/,\s*/)),
      );
      for (const label of labels) {
        const answer = await prometheus.query(
          `count({__name__=~"${names.join('|')}", ${label}!=""})`,
        );
        if (answer.data?.result.length !== 1) unknown.push(`${where}: ${label}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('loads every alert rule and evaluates each without error', async () => {
    interface Rule {
      name: string;
      health: string;
      lastError?: string;
      lastEvaluation: string;
    }
    // An evaluation before the first scrape sees no series, and no series gives no error.
    const since = Date.now() + 1_000;
    let rules: Rule[] = [];
    await eventually('every rule evaluated on scraped series', async () => {
      const res = await fetch(`${prometheus.url}/api/v1/rules`);
      const body = (await res.json()) as { data: { groups: { rules: Rule[] }[] } };
      rules = body.data.groups.flatMap((g) => g.rules);
      return rules.length > 0 && rules.every((r) => Date.parse(r.lastEvaluation) > since);
    });
    expect(rules.map((r) => r.name)).toEqual(alertRules().map((r) => r.alert));
    expect(rules.filter((r) => r.health !== 'ok')).toEqual([]);
  });
});
