import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEPLOY_DIR } from '../deploy/manifests.js';
import { freePortBlock, REPO_ROOT } from '../helpers/server-process.js';
import { haproxyInstalled, requireService } from '../helpers/services.js';
import { ownSharedBackends } from '../helpers/shared-backends.js';
import { testRunEnv } from '../helpers/test-run.js';

const SUITE = 'npm run cluster (N instances behind HAProxy)';

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

async function until(
  what: string,
  holds: () => boolean | Promise<boolean>,
  ms: number,
  output: () => string,
) {
  const deadline = Date.now() + ms;
  while (!(await holds())) {
    if (Date.now() > deadline)
      throw new Error(`${what} did not happen within ${ms} ms:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Cluster {
  script: ChildProcess;
  /** HAProxy's; instance i serves on port + i, its operations listener on port + count + i. */
  port: number;
  key: string;
  /** The logs folder the script named at start. */
  logs: string;
  output: () => string;
  exited: Promise<number | null>;
}

const ready = (await requireService('postgres', SUITE)) && (await requireService('redis', SUITE));
if (ready && !haproxyInstalled() && process.env.CI !== 'true') {
  console.warn(`skipping ${SUITE}: haproxy is not installed (apt-get install haproxy)`);
}

describe.runIf(ready && (haproxyInstalled() || process.env.CI === 'true'))(SUITE, () => {
  const scripts: ChildProcess[] = [];
  const cleanUps: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const script of scripts) script.kill('SIGKILL');
    for (const cleanUp of cleanUps) await cleanUp();
  });

  /** Starts `npm run cluster -- N` on a schema and key prefix of its own; resolves once it serves. */
  async function startCluster(count: number, env: Record<string, string> = {}): Promise<Cluster> {
    const backends = await ownSharedBackends();
    cleanUps.push(backends.cleanUp);
    // HAProxy on port, instance i on port + i, its operations listener on port + count + i.
    const port = await freePortBlock(2 * count + 1);
    const script = spawn('bash', ['scripts/cluster.sh', String(count)], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ...testRunEnv(),
        PORT: String(port),
        ...backends.env,
        // Not the clone's ./cluster-logs: a folder of the test's own.
        CLUSTER_LOGS: tempDir('cluster-logs-'),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    scripts.push(script);
    let text = '';
    script.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString()));
    script.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const output = () => text;
    const exited = new Promise<number | null>((resolve) => script.once('exit', resolve));
    await until(
      'the start',
      () => {
        if (script.exitCode !== null) throw new Error(text);
        return text.includes('Ctrl-C stops everything');
      },
      60_000,
      output,
    );
    const key = /a pro-plan key for trying it: (\S+)/.exec(text)?.[1] ?? '';
    const logs = /cluster: logs in (\S+)/.exec(text)?.[1] ?? '';
    return { script, port, key, logs, output, exited };
  }

  it('serves through one address from two instances, and Ctrl-C stops every process', async () => {
    const { script, port, key, exited } = await startCluster(2);
    expect(key).toMatch(/^pa_live_/);

    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/v1/pets`, {
        headers: { authorization: `Bearer ${key}` },
      });
      statuses.push(res.status);
      // Both instances count against the key's one plan, through Redis.
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(300 - i - 1));
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    for (const p of [port + 1, port + 2, port + 3, port + 4]) {
      expect(await portAnswers(p), String(p)).toBe(true);
    }

    script.kill('SIGINT');
    expect(await exited).toBe(0);
    for (const p of [port, port + 1, port + 2, port + 3, port + 4]) {
      expect(await portAnswers(p), String(p)).toBe(false);
    }
  }, 120_000);

  it('restarts an instance killed with SIGKILL, serves through it again, and keeps the logs after SIGTERM', async () => {
    // At debug level each instance logs every request it serves, so its log shows who answered.
    // HAProxy's checks every 250 ms instead of every second: it takes the restarted instance back
    // after 2 good ones (rise 2) sooner, and nothing here depends on the interval.
    const { script, port, key, logs, output, exited } = await startCluster(2, {
      LOG_LEVEL: 'debug',
      HAPROXY_INTER: '250ms',
    });
    const instanceLog = join(logs, 'instance-1.log');
    const withLog = () =>
      `${output()}\n--- instance-1.log ---\n${readFileSync(instanceLog, 'utf8')}`;
    // The newest run of instance 1: should it have exited on its own before now (the script
    // restarts it), that earlier pid is gone and the kill goes to the one that replaced it.
    const latest = () =>
      Number([...output().matchAll(/instance 1 started \(pid (\d+)/g)].at(-1)?.[1] ?? 0);
    let first = 0;
    await until(
      'a SIGKILL delivered to instance 1',
      () => {
        first = latest();
        try {
          process.kill(first, 'SIGKILL');
          return true;
        } catch {
          return false;
        }
      },
      30_000,
      withLog,
    );
    expect(first).toBeGreaterThan(0);

    const restarted = () => {
      const after = output().split(`exited with status 137`).slice(1).join('');
      return Number(/instance 1 started \(pid (\d+)/.exec(after)?.[1] ?? 0);
    };
    await until('the restart', () => restarted() > 0, 30_000, withLog);
    expect(restarted()).not.toBe(first);
    expect(output()).toMatch(/instance 1 \(port \d+\) exited with status 137; restarting in 1 s/);
    const served = () => {
      const text = readFileSync(instanceLog, 'utf8');
      return text.slice(text.lastIndexOf('listening')).includes('/v1/pets');
    };
    // HAProxy puts it back after 2 good health checks; until then the other serves.
    await until(
      'a request through HAProxy served by the restarted instance',
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/v1/pets`, {
          headers: { authorization: `Bearer ${key}` },
        });
        expect(res.status).toBe(200);
        return served();
      },
      45_000,
      withLog,
    );

    script.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const p of [port, port + 1, port + 2, port + 3, port + 4]) {
      expect(await portAnswers(p), String(p)).toBe(false);
    }
    expect(output()).toContain(`cluster: logs kept in ${logs}`);
    expect(readdirSync(logs).sort()).toEqual([
      'haproxy.cfg',
      'haproxy.log',
      'instance-1.log',
      'instance-2.log',
    ]);
    // Every run of instance 1 is in its log, one after the other: the restart appended to it.
    const runs = readFileSync(instanceLog, 'utf8').match(/Pet Adoption Service listening/g) ?? [];
    expect(runs.length).toBeGreaterThanOrEqual(2);
  }, 150_000);

  it('checks /readyz on the ops port, takes out an instance whose /readyz fails, and answers the JSON Error body when none is left', async () => {
    // A SIGTERM makes an instance answer /readyz 503 on both listeners while it still serves, for
    // DRAIN_SECONDS: long here, so that only the checks can be what takes it out. HAProxy checks
    // every 250 ms, so that it sees the failures sooner.
    const { script, port, key, logs, output, exited } = await startCluster(2, {
      LOG_LEVEL: 'debug',
      HAPROXY_INTER: '250ms',
      DRAIN_SECONDS: '60',
    });
    const log = (name: string) => readFileSync(join(logs, name), 'utf8');
    const withLogs = () =>
      ['haproxy.log', 'instance-1.log', 'instance-2.log']
        .map((name) => `--- ${name} ---\n${log(name)}`)
        .join('\n');
    const served = (i: number) =>
      log(`instance-${i}.log`)
        .split('\n')
        .filter((line) => line.includes('"url":"/v1/pets"')).length;
    const get = (url: string) =>
      fetch(url, { headers: { authorization: `Bearer ${key}` } }).then(async (res) => ({
        status: res.status,
        headers: res.headers,
        body: await res.text(),
      }));
    const pid = (i: number) =>
      Number(
        [...output().matchAll(new RegExp(`instance ${i} started \\(pid (\\d+)`, 'g'))].at(-1)?.[1],
      );
    /** Stops instance i as its supervisor would, and waits until HAProxy has taken it out. */
    const stopInstance = async (i: number) => {
      process.kill(pid(i), 'SIGTERM');
      await until(
        `HAProxy taking instance ${i} out`,
        () => log('haproxy.log').includes(`instances/instance${i} is DOWN`),
        30_000,
        withLogs,
      );
    };

    // Each instance's checks arrive on its operations listener, not on the pet API's port.
    for (const i of [1, 2]) {
      await until(
        `a health check on instance ${i}'s ops port`,
        () => /"listener":"ops".*"url":"\/readyz"/.test(log(`instance-${i}.log`)),
        15_000,
        withLogs,
      );
    }

    await stopInstance(1);
    // Out of the rotation, not gone: it answers 503 on /readyz and still serves when asked itself.
    expect((await get(`http://127.0.0.1:${port + 3}/readyz`)).status).toBe(503);
    const direct = served(1);
    expect((await get(`http://127.0.0.1:${port + 1}/v1/pets`)).status).toBe(200);
    await until(
      'instance 1 logging the request sent to it',
      () => served(1) > direct,
      10_000,
      withLogs,
    );
    const [first, second] = [served(1), served(2)];
    const statuses: number[] = [];
    for (let n = 0; n < 6; n++)
      statuses.push((await get(`http://127.0.0.1:${port}/v1/pets`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    await until(
      'instance 2 logging the 6 requests',
      () => served(2) >= second + 6,
      10_000,
      withLogs,
    );
    expect(served(1)).toBe(first);

    await stopInstance(2);
    // No instance is ready: HAProxy answers by itself, with the shipped errorfile.
    const shipped = readFileSync(join(DEPLOY_DIR, 'haproxy', 'errors', '503.http'), 'latin1');
    const refusal = await get(`http://127.0.0.1:${port}/v1/pets`);
    expect(refusal.status).toBe(503);
    expect(refusal.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(refusal.headers.get('retry-after')).toBe('5');
    expect(refusal.body).toBe(shipped.slice(shipped.indexOf('\r\n\r\n') + 4));
    expect(JSON.parse(refusal.body)).toMatchObject({ code: 'unavailable', status: 503 });

    // A second SIGTERM (from the script's own stop) cuts the instances' drain short.
    script.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const p of [port, port + 1, port + 2, port + 3, port + 4]) {
      expect(await portAnswers(p), String(p)).toBe(false);
    }
  }, 150_000);
});

describe('npm run cluster without HAProxy', () => {
  /**
   * A PATH without haproxy, where apt-get is a stand-in that only records that it was called (and
   * installs nothing), and only the few commands the script runs before it would start anything.
   */
  function bareBin(): { bin: string; aptCalls: string } {
    const bin = tempDir('cluster-bin-');
    const aptCalls = join(bin, 'apt-get.calls');
    for (const tool of ['dirname', 'id'])
      symlinkSync(execFileSync('which', [tool], { encoding: 'utf8' }).trim(), join(bin, tool));
    writeFileSync(join(bin, 'apt-get'), `#!/bin/sh\necho "$@" >> ${aptCalls}\n`);
    chmodSync(join(bin, 'apt-get'), 0o755);
    return { bin, aptCalls };
  }

  function cluster(bin: string, ...args: string[]) {
    return spawnSync('/bin/bash', ['scripts/cluster.sh', ...args], {
      cwd: REPO_ROOT,
      env: { PATH: bin, HOME: process.env.HOME ?? '', ...testRunEnv() },
      // Not a terminal, so there is nobody to ask.
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      timeout: 15_000,
    });
  }

  it('exits 1 saying what to install, and installs nothing, without --install', () => {
    const { bin, aptCalls } = bareBin();

    const result = cluster(bin, '2');

    expect(result.status).toBe(1);
    expect(result.stderr).toContain('HAProxy is not installed');
    expect(result.stderr).toContain('apt-get install haproxy');
    expect(result.stderr).toContain('--install');
    expect(existsSync(aptCalls)).toBe(false);
  });

  it('runs apt-get install haproxy with --install', () => {
    const { bin, aptCalls } = bareBin();

    const result = cluster(bin, '--install', '2');

    // The stand-in installed nothing, so the script stops there.
    expect(result.stderr).toContain('haproxy is still not on PATH');
    expect(result.status).toBe(1);
    expect(readFileSync(aptCalls, 'utf8')).toBe('install -y -qq haproxy\n');
  });
});
