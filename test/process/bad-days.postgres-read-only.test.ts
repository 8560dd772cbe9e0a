import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type AnsweredCreate,
  create,
  expectAcknowledgedKept,
  expectRefusedAsOutage,
  probeHealth,
  startServer,
  untilReady,
} from '../helpers/bad-days.js';
import { POSTGRES_URL, postgresFor, urlWithSchema } from '../helpers/postgres.js';
import { testRedisConfig } from '../helpers/redis.js';
import type { ServerProcess } from '../helpers/server-process.js';
import { requireService } from '../helpers/services.js';
import { scaled } from '../helpers/machine.js';

/**
 * PostgreSQL that stops taking writes while creates are under way (issue 19 item 2), as right
 * after a failover: the service's own role gets `default_transaction_read_only = on` and its
 * sessions are terminated, so every connection the pool opens again is read-only, as one to a
 * standby would be. Other tests on the shared server are untouched (the role and its schema are
 * this file's). Each refused create is answered 503 `unavailable` with Retry-After within the
 * request timeout; /healthz stays under 1 s; /readyz says 503 while writes fail and 200 by itself
 * once the role takes writes again; no acknowledged pet is lost. Runs the built server.
 */

const SUITE = 'PostgreSQL turned read-only under a running server';
const available = (await postgresFor(SUITE)) && (await requireService('redis', SUITE));

/** Creates sent side by side all through the test, as clients keep sending during a failover. */
const SENDERS = 4;

describe.runIf(available)(SUITE, () => {
  const suffix = randomBytes(5).toString('hex');
  const role = `petstore_ro_${suffix}`;
  const schema = `petstore_ro_${suffix}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  const running: ServerProcess[] = [];

  const asAdmin = (text: string) => admin.query(text);
  const quotedRole = pg.escapeIdentifier(role);

  beforeAll(async () => {
    await admin.connect();
    await asAdmin(`CREATE ROLE ${quotedRole} LOGIN`);
    // Owned by the role: the service migrates it, as it would a database of its own.
    await asAdmin(`CREATE SCHEMA ${pg.escapeIdentifier(schema)} AUTHORIZATION ${quotedRole}`);
  });

  afterEach(() => {
    for (const server of running.splice(0)) {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  });

  afterAll(async () => {
    await asAdmin(`ALTER ROLE ${quotedRole} RESET default_transaction_read_only`);
    await asAdmin(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${role}'`,
    );
    await asAdmin(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
    await asAdmin(`DROP ROLE IF EXISTS ${quotedRole}`);
    await admin.end();
  });

  /** Ends every session of the role: the pool's next connections get the role's setting. */
  async function terminateSessions(): Promise<number> {
    const { rows } = await admin.query<{ ended: boolean }>(
      'SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE usename = $1',
      [role],
    );
    return rows.filter((row) => row.ended).length;
  }

  it('answers refused creates 503 with Retry-After, says not ready, and is ready again by itself after', async () => {
    const url = new URL(urlWithSchema(schema));
    url.username = role;
    const redis = testRedisConfig();
    const { server, key } = await startServer(url.toString(), {
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: redis.keyPrefix,
    });
    running.push(server);

    const probes = probeHealth(server.url);
    const sent: AnsweredCreate[] = [];
    let phase: 'before' | 'read-only' | 'after' | 'ready' = 'before';
    const byPhase = { before: [] as AnsweredCreate[], 'read-only': [] as AnsweredCreate[] };
    /** Creates sent once /readyz said 200 again (one sent before may still meet a read-only session). */
    const afterReady: AnsweredCreate[] = [];
    let sending = true;
    const senders = Array.from({ length: SENDERS }, async () => {
      while (sending) {
        const at = phase;
        const one = await create(server.url, key, `read-only test ${at}`);
        sent.push(one);
        if (at === 'ready') afterReady.push(one);
        else if (at !== 'after' && phase === at) byPhase[at].push(one);
      }
    });

    await new Promise((resolve) => setTimeout(resolve, 1_500));
    phase = 'read-only';
    await asAdmin(`ALTER ROLE ${quotedRole} SET default_transaction_read_only = on`);
    const ended = await terminateSessions();
    const notReadyMs = await untilReady(server.url, 503, 5_000).catch(() => Infinity);
    // Creates keep arriving for a while after readiness turned, each refused.
    const refusedFrom = sent.length;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const whileReadOnly = sent.slice(refusedFrom);

    await asAdmin(`ALTER ROLE ${quotedRole} RESET default_transaction_read_only`);
    phase = 'after';
    const readyAgainMs = await untilReady(server.url, 200, 15_000).catch(() => Infinity);
    // Once ready, creates succeed again (the read-only sessions are gone from the pool).
    phase = 'ready';
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    sending = false;
    await Promise.all(senders);
    await probes.stop();

    const count = (list: readonly AnsweredCreate[], status: number) =>
      list.filter((c) => c.status === status).length;
    const slowestHealth = Math.round(Math.max(...probes.health.map((p) => p.ms)));
    console.log(
      `[read-only PostgreSQL] ${sent.length} creates: before ${byPhase.before.length} ` +
        `(${count(byPhase.before, 201)} x 201); ${ended} sessions ended, not ready after ` +
        `${notReadyMs} ms; while read-only ${whileReadOnly.length} (${count(whileReadOnly, 503)} ` +
        `x 503, slowest ${Math.round(Math.max(...whileReadOnly.map((c) => c.ms ?? 0)))} ms); ` +
        `ready again ${readyAgainMs} ms after the reset; after ready ${afterReady.length} ` +
        `(${count(afterReady, 201)} x 201); statuses ${[...new Set(sent.map((c) => `${c.status ?? c.error}`))].join(',')}; ` +
        `/readyz 503 x ${probes.ready.filter((p) => p.status === 503).length}; slowest /healthz ${slowestHealth} ms`,
    );

    expect(count(byPhase.before, 201)).toBeGreaterThan(0);
    expectRefusedAsOutage(sent);
    expect(notReadyMs).toBeLessThan(scaled(5_000));
    expect(readyAgainMs).toBeLessThan(scaled(15_000));
    expect(whileReadOnly.length).toBeGreaterThan(0);
    expect(whileReadOnly.every((c) => c.status === 503)).toBe(true);
    expect(afterReady.length).toBeGreaterThan(0);
    expect(afterReady.every((c) => c.status === 201)).toBe(true);
    expect(probes.health.every((p) => p.status === 200)).toBe(true);
    expect(slowestHealth).toBeLessThan(scaled(1_000));
    await expectAcknowledgedKept(server.url, key, sent);
  });
});
