import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../src/http/errors/error-handler.js';
import { LEASE_TRUST_MS } from '../../src/storage/redis/rate-limit-leases.js';
import {
  type Answer,
  call,
  createKeyWithCli,
  Instances,
  runPetstore,
  sleep,
} from '../helpers/instances.js';
import { POSTGRES_URL, postgresFor, usePostgresSchemas, withPort } from '../helpers/postgres.js';
import { PrivateRedis } from '../helpers/redis.js';
import type { ServerProcess } from '../helpers/server-process.js';
import { requireService } from '../helpers/services.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { scaled } from '../helpers/machine.js';

/*
 * Three processes of the built service sharing one PostgreSQL schema (reached through a TCP proxy
 * the test cuts) and one Redis (a redis-server of this file's own, which it stops, freezes and
 * starts again on the same port): every instance answers 503 at once while a dependency is away,
 * and all recover by themselves when it returns, without a restart.
 */
const SUITE = 'three instances on one PostgreSQL and one Redis: outages and recovery';
const available = (await postgresFor(SUITE)) && (await requireService('redis', SUITE));

const ENTERPRISE = ['--plan', 'enterprise', '--per-minute', '100000', '--per-day', '1000000'];
/** An outage must be answered well within this (the request timeout is 30 s). */
const PROMPT_MS = 3_000;
const RECOVERY_MS = 10_000;

describe.runIf(available)(SUITE, () => {
  const schemas = usePostgresSchemas();
  const instances = new Instances();
  let redis: PrivateRedis;
  let proxy: TcpProxy;
  let servers: ServerProcess[] = [];
  let cliEnv: Record<string, string>;
  let key: string;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    const postgres = new URL(POSTGRES_URL);
    proxy = await startTcpProxy({ host: postgres.hostname, port: Number(postgres.port || 5432) });
    // The CLI reaches PostgreSQL directly; the instances only through the proxy.
    cliEnv = { DATABASE_URL: schemas.url, REDIS_URL: redis.url };
    servers = await instances.start(3, {
      ...cliEnv,
      DATABASE_URL: withPort(schemas.url, proxy.port),
    });
    ({ key } = await createKeyWithCli(cliEnv, [...ENTERPRISE, '--name', 'outages']));
  });

  afterAll(async () => {
    await instances.stop();
    await proxy?.close();
    await redis?.kill();
  });

  const list = (s: ServerProcess, withKey = key) =>
    call(`${s.url}/v1/pets?limit=1`, { key: withKey });
  const create = (s: ServerProcess) =>
    call(`${s.url}/v1/pets`, { key, body: { name: 'Outage', categoryId: 1 } });

  function expectUnavailable(answer: Answer, dependency: RegExp): void {
    expect(answer.status, JSON.stringify(answer.body)).toBe(503);
    expect(answer.body).toEqual({
      code: 'unavailable',
      message: expect.stringMatching(dependency) as string,
      status: 503,
    });
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.headers.get('retry-after')).toBe(String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    expect(answer.ms).toBeLessThan(scaled(PROMPT_MS));
  }

  /**
   * All three serving before a test brings on its fault. Asked until they do: on a loaded machine
   * one answered a single 503 first, its Redis call slower than the 1 s command timeout.
   */
  const allServing = () => recovery(Date.now());

  /** Every instance ready and serving again; resolves with how long each took (ms). */
  async function recovery(since: number): Promise<number[]> {
    return Promise.all(
      servers.map(async (s) => {
        const deadline = since + RECOVERY_MS;
        for (;;) {
          const ready = await call(`${s.url}/readyz`).catch(() => undefined);
          const listed = ready?.status === 200 ? await list(s).catch(() => undefined) : undefined;
          if (listed?.status === 200) return Date.now() - since;
          if (Date.now() > deadline) {
            throw new Error(`${s.url} not back ${RECOVERY_MS} ms after: ${ready?.status}`);
          }
          await sleep(100);
        }
      }),
    );
  }

  const slowest = (answers: readonly Answer[]) => Math.round(Math.max(...answers.map((a) => a.ms)));

  it('answers 503 unavailable with Retry-After at once while Redis is stopped, /readyz names Redis, and recovers without a restart when Redis returns on the same port', async () => {
    await allServing();
    await redis.stop();
    let answers: Answer[];
    let probes: Answer[];
    try {
      // Each instance spends the quota block it leased while Redis answered lately (within
      // LEASE_TRUST_MS of its last answer); on a busy machine that can outlast the stop by a
      // moment, so each is asked until it refuses, then everything must be refused.
      const refusedAfter = await Promise.all(
        servers.map(async (s) => {
          const started = Date.now();
          while ((await list(s)).status === 200) {
            if (Date.now() - started > LEASE_TRUST_MS + PROMPT_MS)
              throw new Error(`${s.url} serves`);
            await sleep(20);
          }
          return Date.now() - started;
        }),
      );
      console.info(`[multi-instance] Redis stopped: refused after ${refusedAfter.join('/')} ms`);
      answers = await Promise.all(servers.flatMap((s) => [list(s), create(s)]));
      probes = await Promise.all(servers.map((s) => call(`${s.url}/readyz`)));
      for (const a of answers) {
        expectUnavailable(a, /Redis/);
        // Rate limiting fails closed, and the headers say so.
        expect(a.headers.get('x-ratelimit-remaining')).toBe('0');
      }
      for (const p of probes) expectUnavailable(p, /Redis/);
      for (const s of servers) expect((await call(`${s.url}/healthz`)).status).toBe(200);
    } finally {
      if (!redis.running) await redis.start();
    }
    const back = Date.now();
    const recovered = await recovery(back);
    console.info(
      `[multi-instance] Redis stopped: 503 in at most ${slowest(answers)} ms (/readyz ` +
        `${slowest(probes)} ms); started again: the three served again after ${recovered.join('/')} ms`,
    );
  });

  it('hears key changes again after Redis came back: a revoked key is refused by all three well under a second', async () => {
    const fresh = await createKeyWithCli(cliEnv, [...ENTERPRISE, '--name', 'after the outage']);
    // Each instance looks the new key up now and keeps it valid in its cache for 4 s.
    for (const s of servers) expect((await list(s, fresh.key)).status).toBe(200);
    const revoke = await runPetstore(cliEnv, ['keys', 'revoke', fresh.id]);
    expect(revoke.code, revoke.stderr).toBe(0);
    const delays = await Promise.all(
      servers.map(async (s) => {
        for (;;) {
          const answer = await list(s, fresh.key);
          if (answer.status === 401) return Math.max(0, answer.at - revoke.endedAt);
          expect(answer.status).toBe(200);
          if (Date.now() - revoke.endedAt > 5_000) throw new Error(`${s.url} still accepts it`);
          await sleep(10);
        }
      }),
    );
    console.info(`[multi-instance] revocation after the Redis outage: ${delays.join('/')} ms`);
    expect(Math.max(...delays)).toBeLessThan(scaled(1_000));
  });

  it('answers 503 after about the Redis command timeout (1 s), never hanging, while Redis is frozen, and recovers when it thaws', async () => {
    await allServing();
    redis.pause();
    // An instance spends a lease it holds for at most 250 ms after Redis last answered it
    // (LEASE_TRUST_MS); after that every request asks Redis, and fails closed.
    await sleep(300);
    let answers: Answer[];
    try {
      answers = await Promise.all(servers.flatMap((s) => [list(s), call(`${s.url}/readyz`)]));
      for (const a of answers) expectUnavailable(a, /Redis/);
    } finally {
      redis.resume();
    }
    const recovered = await recovery(Date.now());
    console.info(
      `[multi-instance] Redis frozen: 503 in at most ${slowest(answers)} ms; thawed: served ` +
        `again after ${recovered.join('/')} ms`,
    );
  });

  it('answers 503 unavailable with Retry-After while PostgreSQL is cut off, /readyz names the database, and recovers without a restart when it is back', async () => {
    // A key no instance has seen: with the database away it cannot be checked, which is a 503,
    // never a 401 that would tell a client its valid key is wrong.
    const unseen = await createKeyWithCli(cliEnv, [...ENTERPRISE, '--name', 'unseen']);
    await allServing();
    await proxy.cut();
    let cut = true;
    let answers: Answer[];
    let probes: Answer[];
    try {
      answers = await Promise.all(
        servers.flatMap((s) => [list(s), create(s), list(s, unseen.key)]),
      );
      probes = await Promise.all(servers.map((s) => call(`${s.url}/readyz`)));
      for (const a of answers) expectUnavailable(a, /database/);
      for (const p of probes) expectUnavailable(p, /database/);
      for (const s of servers) expect((await call(`${s.url}/healthz`)).status).toBe(200);
      await proxy.restore();
      cut = false;
    } finally {
      if (cut) await proxy.restore();
    }
    const recovered = await recovery(Date.now());
    for (const s of servers) expect((await list(s, unseen.key)).status).toBe(200);
    console.info(
      `[multi-instance] PostgreSQL cut: 503 in at most ${slowest(answers)} ms (/readyz ` +
        `${slowest(probes)} ms); restored: the three served again after ${recovered.join('/')} ms`,
    );
  });
});
