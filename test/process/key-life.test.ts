import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Answer,
  call,
  codeOf,
  createKeyWithCli,
  Instances,
  runPetstore,
  sleep,
} from '../helpers/instances.js';
import { postgresFor, usePostgresSchemas } from '../helpers/postgres.js';
import { PrivateRedis } from '../helpers/redis.js';
import type { ServerProcess } from '../helpers/server-process.js';
import { requireService } from '../helpers/services.js';
import { minuteWithRoom } from '../helpers/minute.js';

/*
 * A key over its life, changed through the built CLI while built servers answer: on SQLite (one
 * process, no Redis: changes reach it through the key change count, within 2.5 s) and on three instances
 * sharing PostgreSQL and Redis (changes announced, within 1 s).
 */
const PG_SUITE = 'key life on three instances on one PostgreSQL and one Redis';
const pgAvailable = (await postgresFor(PG_SUITE)) && (await requireService('redis', PG_SUITE));

/** Refusals never ban here: a test counts 429s without them turning into a ban. */
const SERVER_ENV = { PETSTORE_BAN_AFTER: '1000000', PETSTORE_USAGE_FLUSH_MS: '200' };
const HIGH_LIMITS = ['--plan', 'enterprise', '--per-minute', '5000', '--per-day', '50000'];

function minuteOf(answer: Answer): { limit: number; remaining: number } {
  const policy = answer.headers.get('ratelimit-policy') ?? '';
  const state = answer.headers.get('ratelimit') ?? '';
  return {
    limit: Number(/"minute";q=(\d+)/.exec(policy)?.[1]),
    remaining: Number(/"minute";r=(\d+)/.exec(state)?.[1]),
  };
}

interface Setup {
  servers: ServerProcess[];
  env: Record<string, string>;
  /** How soon a change made with the CLI reaches every instance: less than a cache entry lives. */
  propagationMs: number;
}

function keyLifeTests(label: string, setup: () => Setup): void {
  const url = (s: ServerProcess) => `${s.url}/v1/pets?limit=1`;

  it(`${label}: set-plan mid-minute keeps what was counted and reaches every instance`, async () => {
    const { servers, env, propagationMs } = setup();
    await minuteWithRoom(8_000);
    const { key, id } = await createKeyWithCli(env, ['--plan', 'free']);
    let admitted = 0;
    for (let i = 0; i < 50; i++) {
      const s = servers[i % servers.length];
      if (s === undefined) throw new Error('no instance');
      expect((await call(url(s), { key })).status).toBe(200);
      admitted += 1;
    }
    // Every instance is polled from before the CLI runs until it answers with the pro limits,
    // so each keeps a fresh cache entry of the key (read again every 4 s): without the change
    // notification an instance would go on with the free plan for up to that long. Until it
    // switches it counts on the free plan, and refuses past 60 (a 429 counts nothing).
    const cli: { endedAt?: number } = {};
    const switched = Promise.all(
      servers.map(async (s) => {
        for (;;) {
          const answer = await call(url(s), { key });
          if (answer.status === 200) admitted += 1;
          else expect(answer.status).toBe(429);
          if (minuteOf(answer).limit === 300) return answer.at;
          if (cli.endedAt !== undefined && Date.now() - cli.endedAt > propagationMs + 2_000) {
            throw new Error(`${s.url} still answers with the free plan`);
          }
          await sleep(50);
        }
      }),
    );
    const run = await runPetstore(env, ['keys', 'set-plan', id, '--plan', 'pro']);
    cli.endedAt = run.endedAt;
    expect(run.code, run.stderr).toBe(0);
    const delays = (await switched).map((at) => Math.max(0, at - run.endedAt));
    const last = await call(url(servers[0] as ServerProcess), { key });
    admitted += 1;
    // The counters are the key's: every request admitted before and after the change counted.
    expect(minuteOf(last)).toEqual({ limit: 300, remaining: 300 - admitted });
    console.info(`[key-life] ${label}: set-plan in force ${delays.join('/')} ms after the CLI`);
    expect(Math.max(...delays)).toBeLessThan(propagationMs);
  });

  it(`${label}: set-scopes reaches every instance as fast as set-plan`, async () => {
    const { servers, env, propagationMs } = setup();
    const { key, id } = await createKeyWithCli(env, HIGH_LIMITS);
    // An empty body: 400 invalid_body while the key may write (nothing is created), 403
    // insufficient_scope once it may not (admission comes before the body is read).
    const write = (s: ServerProcess) => call(`${s.url}/v1/pets`, { key, method: 'POST', body: {} });
    for (const s of servers) expect((await write(s)).status).toBe(400);
    // Every instance is polled from before the CLI runs, so each holds the key cached as writable.
    const cli: { endedAt?: number } = {};
    const switched = Promise.all(
      servers.map(async (s) => {
        for (;;) {
          const answer = await write(s);
          if (answer.status === 403) {
            expect(codeOf(answer)).toBe('insufficient_scope');
            expect(answer.headers.get('www-authenticate')).toContain('scope="pets:write"');
            return answer.at;
          }
          expect(answer.status).toBe(400);
          if (cli.endedAt !== undefined && Date.now() - cli.endedAt > propagationMs + 2_000) {
            throw new Error(`${s.url} still lets the key write`);
          }
          await sleep(50);
        }
      }),
    );
    const run = await runPetstore(env, ['keys', 'set-scopes', id, 'pets:read']);
    cli.endedAt = run.endedAt;
    expect(run.code, run.stderr).toBe(0);
    const delays = (await switched).map((at) => Math.max(0, at - run.endedAt));
    for (const s of servers) expect((await call(url(s), { key })).status).toBe(200);
    console.info(`[key-life] ${label}: set-scopes in force ${delays.join('/')} ms after the CLI`);
    expect(Math.max(...delays)).toBeLessThan(propagationMs);
  });

  it(`${label}: an expiry takes effect within a second of its time on every instance`, async () => {
    const { servers, env, propagationMs } = setup();
    // Polled every 25 ms until it expires: more than a pro key's 300 a minute.
    const { key, id } = await createKeyWithCli(env, HIGH_LIMITS);
    for (const s of servers) expect((await call(url(s), { key })).status).toBe(200);
    // Far enough ahead that the change itself has reached every instance by then.
    const expiresAt = Math.ceil((Date.now() + propagationMs + 1_500) / 1000) * 1000;
    const run = await runPetstore(env, [
      'keys',
      'set-expiry',
      id,
      new Date(expiresAt).toISOString(),
    ]);
    expect(run.code, run.stderr).toBe(0);
    const lateness = await Promise.all(
      servers.map(async (s) => {
        for (;;) {
          const sentAt = Date.now();
          const answer = await call(url(s), { key });
          if (answer.status === 401) {
            expect(codeOf(answer)).toBe('api_key_expired');
            expect(answer.headers.get('www-authenticate')).toBe(
              'Bearer realm="pets", error="invalid_token"',
            );
            // Never before its time.
            expect(answer.at).toBeGreaterThanOrEqual(expiresAt);
            return answer.at - expiresAt;
          }
          expect(answer.status).toBe(200);
          // Admitted only when sent before its time: the instance decides by the clock, however
          // long the machine took to answer (so no bound on the lateness itself).
          expect(sentAt).toBeLessThan(expiresAt);
          await sleep(25);
        }
      }),
    );
    console.info(`[key-life] ${label}: expiry refused ${lateness.join('/')} ms after its time`);
    const list = await runPetstore(env, ['keys', 'list', '--json']);
    const views = JSON.parse(list.stdout) as Array<{ id: string; state: string }>;
    expect(views.find((v) => v.id === id)?.state).toBe('expired');
  });

  it(`${label}: a roll keeps the record and counters; the old secret stops at the grace end`, async () => {
    const { servers, env, propagationMs } = setup();
    await minuteWithRoom(10_000);
    const { key: old, id } = await createKeyWithCli(env, HIGH_LIMITS);
    let admitted = 0;
    for (const s of servers) {
      expect((await call(url(s), { key: old })).status).toBe(200);
      admitted += 1;
    }
    // The grace outlasts the change reaching every instance, so the end is what is measured.
    const grace = Math.ceil((propagationMs + 1_500) / 1000);
    const run = await runPetstore(env, ['keys', 'roll', id, '--grace', `${grace}s`]);
    expect(run.code, run.stderr).toBe(0);
    const secret = run.stdout.trim().split('\n').at(-1) ?? '';
    expect(secret).toMatch(/^pa_live_[0-9A-Za-z]{36}$/);
    expect(secret).not.toBe(old);
    const graceEnd = Date.parse(/works until (\S+)\./.exec(run.stderr)?.[1] ?? '');
    expect(graceEnd).toBeGreaterThan(run.endedAt);

    const lateness = await Promise.all(
      servers.map(async (s) => {
        for (;;) {
          const fresh = await call(url(s), { key: secret });
          expect(fresh.status).toBe(200);
          admitted += 1;
          const sentAt = Date.now();
          const answer = await call(url(s), { key: old });
          if (answer.status === 401) {
            expect(codeOf(answer)).toBe('api_key_expired');
            expect(answer.at).toBeGreaterThanOrEqual(graceEnd);
            return answer.at - graceEnd;
          }
          expect(answer.status).toBe(200);
          // The old secret is admitted only when sent before the grace ends.
          expect(sentAt).toBeLessThan(graceEnd);
          admitted += 1;
          await sleep(50);
        }
      }),
    );
    console.info(`[key-life] ${label}: old secret refused ${lateness.join('/')} ms after grace`);
    // Both secrets drew on the one key's minute.
    const last = await call(url(servers[0] as ServerProcess), { key: secret });
    expect(minuteOf(last)).toEqual({ limit: 5000, remaining: 5000 - admitted - 1 });

    const audit = await runPetstore(env, ['keys', 'audit', id, '--json']);
    const entries = JSON.parse(audit.stdout) as Array<{ action: string; actor: unknown }>;
    expect(entries.map((e) => e.action)).toEqual(['create', 'roll']);
    for (const entry of entries) {
      expect(entry.actor).toMatchObject({ kind: 'cli', user: userInfo().username });
    }
    expect(audit.stdout).not.toContain(secret);
    expect(audit.stdout).not.toContain(old);
  });

  it(`${label}: usage after a known number of requests equals it, admitted and refused`, async () => {
    const { servers, env } = setup();
    await minuteWithRoom(5_000);
    const limits = ['--plan', 'enterprise', '--per-minute', '5', '--per-day', '500'];
    const { key, id } = await createKeyWithCli(env, limits);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const s = servers[i % servers.length] as ServerProcess;
      statuses.push((await call(url(s), { key })).status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    const deadline = Date.now() + 30_000;
    let days: Array<{ admitted: number; refused: number }> = [];
    for (;;) {
      const run = await runPetstore(env, ['keys', 'usage', id, '--days', '1', '--json']);
      expect(run.code, run.stderr).toBe(0);
      days = JSON.parse(run.stdout) as typeof days;
      if (days[0]?.admitted === 5 && days[0].refused === 3) break;
      if (Date.now() > deadline) break;
      await sleep(200);
    }
    expect(days).toEqual([{ day: new Date().toISOString().slice(0, 10), admitted: 5, refused: 3 }]);
  });
}

describe('key life on SQLite, one server, no Redis', () => {
  const instances = new Instances();
  let dir: string;
  let context: Setup;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'petstore-key-life-'));
    const env = { DATABASE_URL: `sqlite:${join(dir, 'petstore.db')}` };
    const servers = await instances.start(1, { ...env, ...SERVER_ENV });
    // Without Redis a change reaches a server through the key change count it reads once a
    // second (its cache entries expire after 4 s anyway).
    context = { servers, env, propagationMs: 3_500 };
  });

  afterAll(async () => {
    await instances.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  keyLifeTests('sqlite', () => context);
});

describe.runIf(pgAvailable)(PG_SUITE, () => {
  const schemas = usePostgresSchemas();
  const instances = new Instances();
  let redis: PrivateRedis;
  let context: Setup;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    const env = { DATABASE_URL: schemas.url, REDIS_URL: redis.url };
    const servers = await instances.start(3, { ...env, ...SERVER_ENV });
    // Under the 4 s a cache entry lives, so only the change notification can meet it, with room
    // for a busy machine (changes arrive in milliseconds on an idle one).
    context = { servers, env, propagationMs: 3_000 };
  });

  afterAll(async () => {
    await instances.stop();
    await redis?.kill();
  });

  keyLifeTests('postgres+redis', () => context);
});
