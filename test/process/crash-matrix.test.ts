import { afterAll, describe, expect, it } from 'vitest';
import { createKey } from '../cli/cli-harness.js';
import {
  type CreateTraffic,
  type SentCreate,
  sendCreate,
  startCreating,
  UNLIMITED_KEY_ARGS,
  walkPets,
  type WirePet,
} from '../helpers/pet-traffic.js';
import { postgresFor, urlWithSchema, usePostgresSchemas } from '../helpers/postgres.js';
import { spawnServer, tempDatabaseUrl, type ServerProcess } from '../helpers/server-process.js';

/**
 * SIGKILL in the middle of creates, on each backend, with and without Idempotency-Keys. A SIGKILL
 * shows what a crash of the process does (the OS keeps what was written); what a power cut does
 * rests on the settings test/process/server-process.test.ts checks.
 *
 * One kill per backend: creates with and without Idempotency-Keys are in flight together when it
 * comes, each kind under names of its own, and each test checks its kind. Two kills would prove
 * the same per kind, for two more server starts (seconds each on a busy machine). Whichever test
 * runs first pays for the kill, hence their long timeouts.
 */

const running: ServerProcess[] = [];
afterAll(() => {
  for (const server of running.splice(0)) {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  }
});

async function start(database: string): Promise<ServerProcess> {
  const server = await spawnServer({ DATABASE_URL: database });
  running.push(server);
  return server;
}

/** Requests of each kind in flight at the kill: enough that some are likely between commit and answer. */
const WORKERS = 16;
/** Acknowledged creates of each kind before the kill. */
const BEFORE_KILL = 100;
/** Acknowledged creates retried as if their answers had been lost. */
const LOST_ANSWERS = 20;

function withoutId(pet: WirePet | undefined): Omit<WirePet, 'id'> | undefined {
  if (pet === undefined) return undefined;
  const rest: Partial<WirePet> = { ...pet };
  delete rest.id;
  return rest as Omit<WirePet, 'id'>;
}

/** The pet a create asked for, as the API writes it (without its id). */
function expectedPet(create: SentCreate): Omit<WirePet, 'id'> {
  return JSON.parse(create.body.replace(/"categoryId":(\d+)/, '"categoryId":"$1"')) as Omit<
    WirePet,
    'id'
  >;
}

/** The same request again: same body, same Idempotency-Key, no answer yet. */
function resend({ name, body, idempotencyKey }: SentCreate): SentCreate {
  return { name, body, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) };
}

interface Kind {
  idempotent: boolean;
  prefix: string;
  traffic: CreateTraffic;
}

/** What a kill left: the server started again on the same database, and each kind's traffic. */
interface CrashRun {
  label: string;
  key: string;
  second: ServerProcess;
  /** Every pet the second server lists after the restart. */
  listed: WirePet[];
  plain: Kind;
  keyed: Kind;
}

/** Starts a server, keeps both kinds of creates going, SIGKILLs it, and starts it again. */
async function crashRun(label: string, database: string): Promise<CrashRun> {
  const { key } = await createKey(database, UNLIMITED_KEY_ARGS);
  const first = await start(database);
  const kind = (idempotent: boolean): Kind => {
    const prefix = `crash-${idempotent ? 'keyed' : 'plain'}-${Date.now()}`;
    const traffic = startCreating(first.url, key, { workers: WORKERS, prefix, idempotent });
    return { idempotent, prefix, traffic };
  };
  const plain = kind(false);
  const keyed = kind(true);

  await Promise.all([
    plain.traffic.untilAcknowledged(BEFORE_KILL),
    keyed.traffic.untilAcknowledged(BEFORE_KILL),
  ]);
  // At a moment unrelated to the rhythm of answers, so that some runs kill with creates committed
  // and unanswered, others with creates not yet committed.
  await new Promise((resolve) => setTimeout(resolve, Math.random() * 30));
  first.child.kill('SIGKILL');
  await Promise.all([plain.traffic.stop(), keyed.traffic.stop()]);
  await first.exited;

  const second = await start(database);
  return { label, key, second, listed: await walkPets(second.url, key), plain, keyed };
}

/** Checks one kind of creates against what the kill left, and for keyed ones, their retries. */
async function checkKind(run: CrashRun, { idempotent, prefix, traffic }: Kind) {
  const { key, second } = run;
  const answered = traffic.sent.filter((create) => create.status !== undefined);
  const acknowledged = traffic.acknowledged();
  const unanswered = traffic.sent.filter((create) => create.status === undefined);
  // Every answer before the kill was a 201: no 409, no 5xx.
  expect(answered.filter((create) => create.status !== 201)).toEqual([]);
  expect(unanswered.every((create) => create.error !== undefined)).toBe(true);
  for (const create of acknowledged) expect(withoutId(create.pet)).toEqual(expectedPet(create));

  const stored = new Map<string, WirePet[]>();
  for (const pet of run.listed) {
    if (!pet.name.startsWith(`${prefix} `)) continue;
    stored.set(pet.name, [...(stored.get(pet.name) ?? []), pet]);
  }
  // Every pet answered 201 is there after the restart, unchanged, once.
  for (const create of acknowledged) expect(stored.get(create.name)).toEqual([create.pet]);
  // Nothing was stored twice, and nothing that was never sent.
  const sentNames = new Set(traffic.sent.map((create) => create.name));
  expect([...stored.keys()].filter((name) => !sentNames.has(name))).toEqual([]);
  expect([...stored.values()].filter((pets) => pets.length > 1)).toEqual([]);
  const unansweredStored = unanswered.filter((create) => stored.has(create.name)).length;

  const report: Record<string, number> = {
    sent: traffic.sent.length,
    acknowledged: acknowledged.length,
    unanswered: unanswered.length,
    unansweredStored,
  };
  if (idempotent) {
    // A retry of each unanswered request, same key and body, on the new process: no 409 to wait
    // out, since a killed request held its key only inside its own transaction.
    const retries = unanswered.map(resend);
    const started = performance.now();
    let slowest = 0;
    await Promise.all(
      retries.map(async (retry) => {
        const begun = performance.now();
        await sendCreate(second.url, key, retry);
        slowest = Math.max(slowest, performance.now() - begun);
      }),
    );
    const retriesMs = Math.round(performance.now() - started);
    expect(retries.map((retry) => retry.status)).toEqual(retries.map(() => 201));
    const after = new Map<string, WirePet[]>();
    for (const pet of await walkPets(second.url, key)) {
      if (pet.name.startsWith(`${prefix} `)) {
        after.set(pet.name, [...(after.get(pet.name) ?? []), pet]);
      }
    }
    for (const retry of retries) {
      // Exactly one pet per retried request, the one its answer names; replayed exactly when
      // the killed process had committed it.
      expect(after.get(retry.name)).toEqual([retry.pet]);
      expect(retry.replayed).toBe(stored.has(retry.name));
      expect(withoutId(retry.pet)).toEqual(expectedPet(retry));
    }
    expect(after.size).toBe(acknowledged.length + retries.length);
    // An answer lost on its way looks the same to the server as a kill after the commit, and
    // happens on every run: the last acknowledged requests, retried, replay their pets.
    const lost = acknowledged.slice(-LOST_ANSWERS).map((create) => ({
      again: resend(create),
      pet: create.pet,
    }));
    await Promise.all(lost.map(({ again }) => sendCreate(second.url, key, again)));
    for (const { again, pet } of lost) {
      expect([again.status, again.replayed, again.pet]).toEqual([201, true, pet]);
    }
    Object.assign(report, {
      retried: retries.length,
      lostAnswersReplayed: lost.length,
      replayed: retries.filter((retry) => retry.replayed).length,
      created: retries.filter((retry) => !retry.replayed).length,
      retriesMs,
      slowestRetryMs: Math.round(slowest),
    });
  }
  console.log(
    `crash matrix, ${run.label}, ${idempotent ? 'with' : 'without'} Idempotency-Key: ` +
      Object.entries(report)
        .map(([name, value]) => `${name} ${value}`)
        .join(', '),
  );
  return report;
}

/** The one kill of a backend, made by whichever of its tests runs first. */
function sharedRun(label: string, database: () => Promise<string>): () => Promise<CrashRun> {
  let run: Promise<CrashRun> | undefined;
  return () => (run ??= database().then((url) => crashRun(label, url)));
}

describe('SIGKILL during creates, on SQLite', () => {
  const run = sharedRun('sqlite', async () => tempDatabaseUrl());

  it('keeps every pet answered 201, unchanged, without Idempotency-Keys', async () => {
    const crash = await run();
    const report = await checkKind(crash, crash.plain);

    expect(report.acknowledged).toBeGreaterThanOrEqual(BEFORE_KILL);
  }, 150_000);

  it('keeps every pet answered 201, and a retry of each unanswered one makes exactly one pet', async () => {
    const crash = await run();
    const report = await checkKind(crash, crash.keyed);

    expect(report.acknowledged).toBeGreaterThanOrEqual(BEFORE_KILL);
    expect(report.retried).toBe(report.unanswered);
  }, 150_000);
});

const postgres = await postgresFor('SIGKILL during creates, on PostgreSQL');

describe.runIf(postgres)('SIGKILL during creates, on PostgreSQL', () => {
  const schemas = usePostgresSchemas();
  const run = sharedRun('postgres', async () => urlWithSchema(await schemas.fresh()));

  it('keeps every pet answered 201, unchanged, without Idempotency-Keys', async () => {
    const crash = await run();
    const report = await checkKind(crash, crash.plain);

    expect(report.acknowledged).toBeGreaterThanOrEqual(BEFORE_KILL);
  }, 150_000);

  it('keeps every pet answered 201, and a retry of each unanswered one makes exactly one pet', async () => {
    const crash = await run();
    const report = await checkKind(crash, crash.keyed);

    expect(report.acknowledged).toBeGreaterThanOrEqual(BEFORE_KILL);
    expect(report.retried).toBe(report.unanswered);
  }, 150_000);
});
