import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSchema, postgresFor } from '../helpers/postgres.js';
import { adminClient, deleteKeysWithPrefix, eventually } from '../helpers/redis.js';
import { requestText } from '../helpers/raw-http.js';
import { freePortBlock, REPO_ROOT } from '../helpers/server-process.js';
import { haproxyInstalled, requireService } from '../helpers/services.js';
import { testRunEnv } from '../helpers/test-run.js';
import { parseContainerfile } from './containerfile.js';
import { DEPLOY_DIR, readCompose } from './manifests.js';
import { requirePrometheus } from './observability.js';

/**
 * deploy/compose.yaml run for real, without a container runtime: each of its services becomes
 * processes on this machine with exactly the environment and command the file names (the image's
 * ENV beneath the service's env_file and environment, as a runtime layers them), then the checks
 * the issue asks of a deployment. Every rewrite is a mapping of a container address or port to a
 * loopback one, listed here:
 *
 * - postgres:5432 and redis:6379 are the PostgreSQL and Redis already on this machine (a schema
 *   and a REDIS_KEY_PREFIX of this file's own, as every test keeps to);
 * - the env_file petstore.env is the operator's copy of petstore.env.example, as the file says;
 * - each petstore replica listens on 127.0.0.1 (its container's 0.0.0.0) with PORT, OPS_PORT and
 *   ADMIN_PORT mapped to free ports;
 * - HAProxy's fixed address (its ipv4_address, the one TRUST_PROXY names) is 127.0.0.10: its
 *   connections to the instances leave from there (`source`), as they leave from its container;
 * - HAProxy's `bind :N` lines listen on free loopback ports, its server-template's DNS names are
 *   one `server` line per replica, and the mounted folder is deploy/haproxy;
 * - Prometheus's DNS discovery of `petstore` is the replicas' ops addresses, its data folder and
 *   listen address are the test's own.
 */
const SUITE = 'deploy/compose.yaml run as processes behind the shipped HAProxy and Prometheus';
const ready =
  (await postgresFor(SUITE)) &&
  (await requireService('redis', SUITE)) &&
  requirePrometheus(SUITE, ['prometheus']);
if (ready && !haproxyInstalled() && process.env.CI !== 'true') {
  console.warn(`skipping ${SUITE}: haproxy is not installed (apt-get install haproxy)`);
}

type Json = Record<string, unknown>;
const BURST = 1_000;
/** Where HAProxy's container address (the compose file's ipv4_address) stands on loopback. */
const HAPROXY_LOOPBACK = '127.0.0.10';

function at(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) current = (current as Json | undefined)?.[key];
  return current;
}

/** `KEY=value` lines of an env file (compose.yaml's env_file), comments and blanks skipped. */
function envFile(path: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line.trim());
    if (match) values[match[1] ?? ''] = match[2] ?? '';
  }
  return values;
}

/** The image's ENV: the last stage of deploy/Containerfile, which the services run. */
function imageEnv(): Record<string, string> {
  const stage = parseContainerfile().at(-1);
  const env: Record<string, string> = {};
  for (const instruction of stage?.instructions ?? []) {
    if (instruction.kind === 'ENV') Object.assign(env, instruction.values);
  }
  return env;
}

/** The host folder a service's volume mounts on `target`. */
function volumeSource(service: unknown, target: string): string {
  const volumes = (at(service, 'volumes') ?? []) as string[];
  const found = volumes.find((v) => v.split(':')[1] === target);
  if (found === undefined) throw new Error(`no volume on ${target}`);
  return join(DEPLOY_DIR, found.split(':')[0] ?? '');
}

class Processes {
  private readonly all: { name: string; child: ChildProcess; output: () => string }[] = [];
  private readonly killOnExit = () => this.killAll();

  constructor() {
    process.once('exit', this.killOnExit);
  }

  start(name: string, command: string, args: readonly string[], env: Record<string, string>) {
    const child = spawn(command, args, {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...testRunEnv(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const entry = { name, child, output: () => output };
    this.all.push(entry);
    return entry;
  }

  /** The last lines of every process's output, for a failure's message. */
  outputs(): string {
    return this.all.map((p) => `--- ${p.name}\n${p.output().slice(-3_000)}`).join('\n');
  }

  killAll(): void {
    for (const { child } of this.all) if (child.exitCode === null) child.kill('SIGKILL');
  }

  async stop(): Promise<void> {
    const exits = this.all
      .filter(({ child }) => child.exitCode === null && child.signalCode === null)
      .map(({ child }) => new Promise((resolve) => child.once('exit', resolve)));
    this.killAll();
    await Promise.all(exits);
    process.off('exit', this.killOnExit);
  }
}

interface Instance {
  port: number;
  ops: number;
  admin: number;
  child: ChildProcess;
}

/** HAProxy's stats CSV (the shipped `stats uri`), one record per proxy/server row. */
async function haproxyStats(url: string): Promise<Record<string, string>[]> {
  const text = await (await fetch(`${url};csv`)).text();
  const [header = '', ...rows] = text.trim().split('\n');
  const names = header.replace(/^# /, '').split(',');
  return rows.map((row) => Object.fromEntries(row.split(',').map((v, i) => [names[i] ?? '', v])));
}

describe.runIf(ready && (haproxyInstalled() || process.env.CI === 'true'))(SUITE, () => {
  const compose = readCompose();
  const services = at(compose, 'services') as Json;
  const petstore = services.petstore as Json;
  const processes = new Processes();
  const dir = mkdtempSync(join(tmpdir(), 'petstore-compose-'));
  const prefix = `petstore-compose-${process.pid}-${Date.now()}:`;
  const instances: Instance[] = [];
  let dropSchema: (() => Promise<void>) | undefined;
  let lb = '';
  let adminLb = '';
  let stats = '';
  let prometheus = '';

  /** The environment of a service built on the petstore image, mapped (see the header). */
  function serviceEnv(service: Json, database: string, ports?: Omit<Instance, 'child'>) {
    const fromFile = envFile(join(DEPLOY_DIR, `${String(service.env_file)}.example`));
    const env: Record<string, string> = {
      ...imageEnv(),
      ...fromFile,
      ...((service.environment ?? {}) as Record<string, string>),
    };
    // postgres:5432 and redis:6379, and this file's own schema and key prefix on them.
    expect(env.DATABASE_URL).toMatch(/@postgres:5432\//);
    expect(env.REDIS_URL).toBe('redis://redis:6379');
    env.DATABASE_URL = database;
    env.REDIS_URL = 'redis://127.0.0.1:6379';
    env.REDIS_KEY_PREFIX = prefix;
    if (ports !== undefined) {
      // Each replica's container: 0.0.0.0 is its loopback here, its ports free ones.
      expect([env.HOST, env.OPS_HOST, env.ADMIN_HOST]).toEqual(['0.0.0.0', '0.0.0.0', '0.0.0.0']);
      Object.assign(env, { HOST: '127.0.0.1', OPS_HOST: '127.0.0.1', ADMIN_HOST: '127.0.0.1' });
      env.PORT = String(ports.port);
      env.OPS_PORT = String(ports.ops);
      env.ADMIN_PORT = String(ports.admin);
      const haproxyAddress = at(services.haproxy, 'networks', 'backend', 'ipv4_address');
      expect(env.TRUST_PROXY).toBe(haproxyAddress);
      env.TRUST_PROXY = HAPROXY_LOOPBACK;
    }
    return env;
  }

  /** The command of a service built on the petstore image: its own, or the image's CMD. */
  function serviceCommand(service: Json): string[] {
    const command = service.command as string[] | undefined;
    if (command !== undefined) return command;
    const cmd = parseContainerfile()
      .at(-1)
      ?.instructions.find((i) => i.kind === 'CMD');
    if (cmd?.kind !== 'CMD') throw new Error('the image has no CMD');
    return cmd.command;
  }

  function haproxyConfig(front: number, admin: number, statsPort: number): string {
    const haproxy = services.haproxy as Json;
    const folder = volumeSource(haproxy, '/usr/local/etc/haproxy');
    const shipped = readFileSync(join(folder, 'haproxy.cfg'), 'utf8');
    const opsPort = String(at(petstore, 'environment', 'OPS_PORT'));
    const rewritten = shipped
      .replaceAll('/usr/local/etc/haproxy', folder)
      .replace(/^(\s*)bind :8080$/m, `$1bind 127.0.0.1:${front}`)
      .replace(/^(\s*)bind :8081$/m, `$1bind 127.0.0.1:${admin}`)
      .replace(/^(\s*)bind :8404$/m, `$1bind 127.0.0.1:${statsPort}`)
      .replace(/^(defaults\n)/m, `$1  source ${HAPROXY_LOOPBACK}\n`)
      .replace(/^(\s*)server-template instance \d+ petstore:8080$/m, (_, indent: string) =>
        instances
          .map((i, n) => `${indent}server instance${n + 1} 127.0.0.1:${i.port} port ${i.ops}`)
          .join('\n'),
      )
      .replace(/^(\s*)server-template admin \d+ petstore:8081$/m, (_, indent: string) =>
        instances
          .map((i, n) => `${indent}server admin${n + 1} 127.0.0.1:${i.admin} port ${i.ops}`)
          .join('\n'),
      );
    // Every mapping above found its line, and the checks ask the ops port compose sets.
    for (const line of ['bind :8080', 'bind :8081', 'bind :8404', 'server-template']) {
      expect(rewritten, line).not.toContain(line);
    }
    expect(rewritten).toContain(`check port ${opsPort} `);
    return rewritten;
  }

  function prometheusConfig(): string {
    const prom = services.prometheus as Json;
    const folder = volumeSource(prom, '/etc/prometheus');
    const config = parse(readFileSync(join(folder, 'prometheus.yml'), 'utf8')) as Json;
    const job = (config.scrape_configs as Json[]).find((j) => j.job_name === 'petstore');
    const dns = (job?.dns_sd_configs as Json[] | undefined)?.[0];
    expect(dns?.names).toEqual(['petstore']);
    expect(String(dns?.port)).toBe(String(at(petstore, 'environment', 'OPS_PORT')));
    if (job === undefined) throw new Error('no petstore job');
    delete job.dns_sd_configs;
    job.static_configs = [{ targets: instances.map((i) => `127.0.0.1:${i.ops}`) }];
    config.rule_files = (config.rule_files as string[]).map((file) => join(folder, file));
    return stringify(config);
  }

  beforeAll(async () => {
    const started = Date.now();
    const schema = await createTestSchema();
    dropSchema = schema.drop;
    // migrate: its command, to completion, before any instance (depends_on).
    const migrate = services.migrate as Json;
    const [migrateProgram = '', ...migrateArgs] = serviceCommand(migrate);
    const migration = processes.start(
      'migrate',
      migrateProgram,
      migrateArgs,
      serviceEnv(migrate, schema.url),
    );
    const code = await new Promise((resolve) => migration.child.once('exit', resolve));
    expect(code, migration.output()).toBe(0);

    const replicas = Number(at(petstore, 'deploy', 'replicas'));
    expect(replicas).toBeGreaterThanOrEqual(2);
    const [program = '', ...args] = serviceCommand(petstore);
    // One block of free ports, so that no two picks can collide.
    const base = await freePortBlock(3 * replicas + 4);
    for (let n = 0; n < replicas; n++) {
      const ports = { port: base + 3 * n, ops: base + 3 * n + 1, admin: base + 3 * n + 2 };
      const { child } = processes.start(
        `petstore-${n + 1}`,
        program,
        args,
        serviceEnv(petstore, schema.url, ports),
      );
      instances.push({ ...ports, child });
    }

    const front = base + 3 * replicas;
    const [admin, statsPort, promPort] = [front + 1, front + 2, front + 3];
    lb = `http://127.0.0.1:${front}`;
    adminLb = `http://127.0.0.1:${admin}`;
    stats = `http://127.0.0.1:${statsPort}/haproxy-stats`;
    prometheus = `http://127.0.0.1:${promPort}`;
    writeFileSync(join(dir, 'haproxy.cfg'), haproxyConfig(front, admin, statsPort));
    processes.start('haproxy', 'haproxy', ['-f', join(dir, 'haproxy.cfg'), '-db'], {});

    // prometheus: the compose command with its config file, data folder and address mapped.
    writeFileSync(join(dir, 'prometheus.yml'), prometheusConfig());
    const promArgs = (at(services.prometheus, 'command') as string[]).map((arg) =>
      arg
        .replace(/^--config\.file=.*$/, `--config.file=${join(dir, 'prometheus.yml')}`)
        .replace(/^--storage\.tsdb\.path=.*$/, `--storage.tsdb.path=${join(dir, 'prometheus')}`)
        .replace(/^--web\.listen-address=.*$/, `--web.listen-address=127.0.0.1:${promPort}`),
    );
    processes.start('prometheus', 'prometheus', promArgs, {});

    // Up once HAProxy has every replica in rotation (the ops listener's /readyz says ready).
    await eventually(
      'every replica UP in HAProxy',
      async () => {
        const rows = await haproxyStats(stats);
        // A server starts UP in HAProxy: only a passed check (L7OK) says the replica is ready.
        const up = rows.filter(
          (r) => r.pxname === 'instances' && r.status === 'UP' && r.check_status === 'L7OK',
        );
        return up.length === replicas;
      },
      60_000,
      200,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${processes.outputs()}`);
    });
    console.log(`compose as processes up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }, 120_000);

  afterAll(async () => {
    await processes.stop();
    const redis = adminClient();
    await deleteKeysWithPrefix(redis, prefix).finally(() => redis.quit());
    await dropSchema?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the API through HAProxy, but not /metrics', async () => {
    expect((await fetch(`${lb}/healthz`)).status).toBe(200);
    const metrics = await fetch(`${lb}/metrics`);
    expect(metrics.status).toBe(404);
    expect(((await metrics.json()) as { code: string }).code).toBe('not_found');
    // Each replica serves it on its operations listener, where Prometheus scrapes.
    const ops = await fetch(`http://127.0.0.1:${instances[0]?.ops ?? 0}/metrics`);
    expect(await ops.text()).toContain('petstore_build_info');
  });

  it("has Prometheus scraping every replica's operations listener with the shipped config", async () => {
    await eventually(
      'every petstore target up in Prometheus',
      async () => {
        const answer = (await (
          await fetch(`${prometheus}/api/v1/targets?state=active`)
        ).json()) as {
          data: { activeTargets: { labels: { job: string }; health: string }[] };
        };
        const targets = answer.data.activeTargets.filter((t) => t.labels.job === 'petstore');
        return targets.length === instances.length && targets.every((t) => t.health === 'up');
      },
      // The shipped scrape_interval (15 s) spreads the first scrapes over one interval.
      45_000,
      500,
    );
  });

  it('answers on the admin listener through its HAProxy frontend', async () => {
    const res = await fetch(`${adminLb}/admin/v1/keys`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('unauthorized');
  });

  it('lets no made-up X-Forwarded-For escape the keyless budget', async () => {
    // Spend this client's budget (shared by the replicas through Redis), then try made-up ones.
    let refused = false;
    for (let i = 0; i < 60 && !refused; i++) {
      refused = (await fetch(`${lb}/v1/pets?limit=1`)).status === 429;
    }
    expect(refused).toBe(true);
    const statuses: number[] = [];
    for (let i = 0; i < 35; i++) {
      const forged = `203.0.113.${i + 1}`;
      const res = await fetch(`${lb}/v1/pets?limit=1`, { headers: { 'x-forwarded-for': forged } });
      statuses.push(res.status);
    }
    const escaped = statuses.filter((status) => status !== 429).length;
    console.log(`made-up X-Forwarded-For: ${escaped} of 35 escaped the keyless budget`);
    expect(escaped).toBe(0);
  });

  it(`answers a burst of ${BURST} concurrent requests through HAProxy, none lost to the caps, no replica out of rotation`, async () => {
    const before = await haproxyStats(stats);
    // In rotation or not, and UP-to-DOWN transitions so far. A replica one failed check short of
    // leaving shows as `UP 1/2` and still serves: on a machine busy enough, a check of the burst's
    // replica can miss its 1 s once (fall 2 is there for that), which is not a replica out.
    const downs = (rows: Record<string, string>[]) =>
      rows
        .filter(
          (r) => r.pxname === 'instances' && r.svname !== 'BACKEND' && r.svname !== 'FRONTEND',
        )
        .map((r) => `${r.svname}:${r.status?.startsWith('UP') ? 'UP' : r.status}:${r.chkdown}`);
    // Through node:http, a connection each as fetch opened them: fetch cost the test's side about
    // twice the CPU per request.
    const agent = new Agent({ keepAlive: false });
    const statuses = await Promise.all(
      Array.from({ length: BURST }, () =>
        requestText(`${lb}/healthz`, { method: 'GET', agent, headers: {}, timeoutMs: 60_000 }).then(
          (res) => res.status,
          () => 0,
        ),
      ),
    );
    agent.destroy();
    const counts: Record<string, number> = {};
    for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
    console.log(`burst of ${BURST} through HAProxy: ${JSON.stringify(counts)}`);
    expect(counts).toEqual({ 200: BURST });
    // chkdown counts UP-to-DOWN transitions: none during the burst, and every replica still UP.
    expect(downs(await haproxyStats(stats))).toEqual(downs(before));
    expect(downs(before).every((d) => d.includes(':UP:'))).toBe(true);
  });

  it('answers with the Error body, not HTML, when no replica is ready', async () => {
    for (const instance of instances) instance.child.kill('SIGKILL');
    let res: Response | undefined;
    await eventually(
      'HAProxy answers 503 itself',
      async () => {
        res = await fetch(`${lb}/v1/pets?limit=1`);
        return res.status === 503;
      },
      20_000,
      200,
    );
    expect(res?.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res?.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await res?.json()).toMatchObject({ code: 'unavailable', status: 503 });
  });
});
