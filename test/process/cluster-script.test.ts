import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestSchema } from '../helpers/postgres.js';
import { adminClient, deleteKeysWithPrefix, testRedisConfig } from '../helpers/redis.js';
import { freePort, REPO_ROOT } from '../helpers/server-process.js';
import { requireService } from '../helpers/services.js';

const SUITE = 'npm run cluster (N instances behind HAProxy)';

function haproxyInstalled(): boolean {
  try {
    execFileSync('haproxy', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

const ready = (await requireService('postgres', SUITE)) && (await requireService('redis', SUITE));
if (ready && !haproxyInstalled() && process.env.CI !== 'true') {
  console.warn(`skipping ${SUITE}: haproxy is not installed (apt-get install haproxy)`);
}

describe.runIf(ready && (haproxyInstalled() || process.env.CI === 'true'))(SUITE, () => {
  let script: ChildProcess | undefined;
  const cleanUps: Array<() => Promise<void>> = [];
  afterAll(async () => {
    script?.kill('SIGKILL');
    for (const cleanUp of cleanUps) await cleanUp();
  });

  it('serves through one address from two instances, and Ctrl-C stops every process', async () => {
    const schema = await createTestSchema();
    const redis = testRedisConfig();
    cleanUps.push(schema.drop, async () => {
      const client = adminClient();
      await deleteKeysWithPrefix(client, redis.keyPrefix);
      client.disconnect();
    });
    const port = await freePort();
    script = spawn('bash', ['scripts/cluster.sh', '2'], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        PORT: String(port),
        DATABASE_URL: schema.url,
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: redis.keyPrefix,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    script.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    script.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => script?.once('exit', resolve));
    const deadline = Date.now() + 30_000;
    while (!output.includes('Ctrl-C stops everything')) {
      if (Date.now() > deadline || script.exitCode !== null) throw new Error(output);
      await new Promise((r) => setTimeout(r, 100));
    }
    const key = /a pro-plan key for trying it: (\S+)/.exec(output)?.[1];
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
    expect(await portAnswers(port + 1)).toBe(true);
    expect(await portAnswers(port + 2)).toBe(true);

    script.kill('SIGINT');
    expect(await exited).toBe(0);
    for (const p of [port, port + 1, port + 2]) expect(await portAnswers(p), String(p)).toBe(false);
  }, 60_000);
});
