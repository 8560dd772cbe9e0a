import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { type Config, loadConfig } from '../../src/config/config.js';
import type { Admission, AdmissionRequest } from '../../src/domain/admission/admission-service.js';
import type { Storage } from '../../src/domain/ports.js';
import { createServices, type Services } from '../../src/services.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { postgresFor } from '../helpers/postgres.js';
import { requireService } from '../helpers/services.js';
import { ownSharedBackends, type SharedBackendEnv } from '../helpers/shared-backends.js';
import { TestClock } from '../helpers/test-clock.js';
import { minuteWithRoom } from '../helpers/minute.js';

/*
 * Issue 19 item 8, "Clocks": the time of a `keys unban` is the database's, so a CLI host whose
 * clock is behind, and which cannot reach the servers' Redis to end the live ban itself, still
 * ends it. Real PostgreSQL and Redis: the ban starts on Redis's clock, the lift on PostgreSQL's;
 * the lift also names the ban it ends (its end on Redis's clock), so that a Redis whose clock runs
 * ahead of PostgreSQL's does not keep it either.
 */
const SUITE = 'keys unban from a host whose clock is 10 minutes behind, without Redis';
const SKEW_MS = 10 * 60_000;
const OPS = { kind: 'cli', user: 'ops', host: 'skewed-host' } as const;
const silent = { write: () => true };

const available = (await postgresFor(SUITE)) && (await requireService('redis', SUITE));

const outcome = (admission: Admission) =>
  admission.admitted ? 'admitted' : admission.refusal.code;

describe.runIf(available)(SUITE, () => {
  let backends: { env: SharedBackendEnv; cleanUp(): Promise<void> };
  let server: Services;
  /** The CLI's settings: the same database, no REDIS_URL. */
  let cliConfig: Config;
  let cliStorage: Storage;
  let cli: Services;
  const cliClock = new TestClock();

  beforeAll(async () => {
    backends = await ownSharedBackends();
    // A server as in production: PostgreSQL, counters and bans in Redis on Redis's clock.
    server = await createServices(loadConfig({ ...backends.env, PETSTORE_BAN_AFTER: '1' }), {
      migrate: true,
    });
    cliConfig = loadConfig({ DATABASE_URL: backends.env.DATABASE_URL });
    // The storage as the CLI opens it (no clock passed in), under services that read this host's
    // clock: the one the test sets 10 minutes behind.
    cliStorage = await createStorage(cliConfig.database);
    cli = await createServices(cliConfig, { clock: cliClock, storage: cliStorage });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  afterAll(async () => {
    await cli?.close();
    await cliStorage?.close();
    await server?.close();
    await backends?.cleanUp();
  });

  /** A key the server has just banned, in a minute with room left for the rest of the test. */
  async function bannedKey(
    by: Services = server,
  ): Promise<{ id: string; request: AdmissionRequest }> {
    // The refusal after the unban must be this minute's 429, not a new minute's admission.
    await minuteWithRoom(5_000);
    const { key, secret } = await by.keys.create(
      { change: { plan: 'enterprise', perMinute: 1, perDay: 100 } },
      OPS,
    );
    const request: AdmissionRequest = {
      credential: { kind: 'bearer', token: secret },
      address: '198.51.100.7',
      operation: { access: 'api_key' },
    };
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(outcome(await by.admission.admit(request)));
    expect(outcomes).toEqual(['admitted', 'rate_limited', 'rate_limited', 'api_key_banned']);
    return { id: key.id, request };
  }

  /** What the server answers once its key cache lifetime has passed since the unban. */
  async function serverAnswer(
    id: string,
    request: AdmissionRequest,
    by: Services = server,
  ): Promise<string> {
    // No key-change notice reaches the server from a CLI without Redis: the cache lifetime (not
    // waited out here) makes it read the key again, with its unban time.
    by.apiKeys.forget(id);
    return outcome(await by.admission.admit(request));
  }

  it('lifts the ban on a server using Redis, and dates the lift and its audit record by the database', async () => {
    const { id, request } = await bannedKey();

    const start = Date.now();
    cliClock.set(start - SKEW_MS);
    await cli.keys.unban(id, OPS);
    const end = Date.now();

    // Still the minute's 429, but no longer banned: the ban in Redis was ended.
    expect(await serverAnswer(id, request)).toBe('rate_limited');
    const stored = await server.storage.apiKeys.findById(id);
    expect(stored?.bannedUntil).toBeUndefined();
    // PostgreSQL runs on this machine: its clock is the one Date.now() reads.
    expect(stored?.banLiftedAt).toBeGreaterThanOrEqual(start - 1_000);
    expect(stored?.banLiftedAt).toBeLessThanOrEqual(end + 1_000);
    const audited = (await cli.keys.audit({ keyId: id })).find((e) => e.action === 'unban');
    expect(audited?.actor).toEqual(OPS);
    expect(Date.parse(audited?.at ?? '')).toBe(stored?.banLiftedAt);
  });

  it('does the same through `petstore keys unban` as a shell runs it, on a host whose Date is behind', async () => {
    const { id, request } = await bannedKey();

    // The host's clock, as the CLI reads it when no test passes one in; timers keep real time.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - SKEW_MS });
    const code = await runCli(['keys', 'unban', id], {
      stdout: silent,
      stderr: silent,
      config: cliConfig,
    });
    vi.useRealTimers();

    expect(code).toBe(0);
    expect(await serverAnswer(id, request)).toBe('rate_limited');
  });

  it('lifts a ban begun on a Redis clock 10 minutes ahead of the database', async () => {
    // Windows and bans on a clock 10 minutes ahead, as a Redis host's would be: whole minutes, so
    // the minute's boundaries stay where minuteWithRoom finds them.
    const ahead = await createServices(loadConfig({ ...backends.env, PETSTORE_BAN_AFTER: '1' }), {
      clock: { now: () => Date.now() + SKEW_MS },
    });
    try {
      const { id, request } = await bannedKey(ahead);
      // The lift is dated now by PostgreSQL: 10 minutes before the ban's start on that clock.
      await cli.keys.unban(id, OPS);
      const stored = await ahead.storage.apiKeys.findById(id);
      expect(stored?.banLiftedAt).toBeLessThan(Date.now() + 1_000);

      expect(await serverAnswer(id, request, ahead)).toBe('rate_limited');
    } finally {
      await ahead.close();
    }
  });
});
