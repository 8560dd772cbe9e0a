import {
  MessageChannel,
  type MessagePort,
  receiveMessageOnPort,
  Worker,
} from 'node:worker_threads';
import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import { DependencyUnavailableError } from '../../domain/errors.js';
import { MAX_PET_ID } from '../../domain/pets/pet.js';
import type { DurabilitySettings } from '../../domain/ports.js';
import { NO_STORAGE_OBSERVER, type StorageObserver } from '../observer.js';
import type { Database } from '../sql/database.js';
import type { SqlWrites } from '../sql/dialect-traits.js';
import { GroupCommit, type Outcome } from '../sql/group-commit.js';
import { type KeyParams, petQueries } from '../sql/pet-queries.js';
import type { toRow } from '../sql/pet-rows.js';
import { compileOnce } from '../sql/prepared-sql.js';
import { applyGroup, statementCache } from './sqlite-commit-worker.js';
import { isUnavailableCode, readSqliteDurability } from './sqlite-settings.js';

export type WorkerWrite = Parameters<typeof applyGroup>[3][number];
type WorkerResult = ReturnType<typeof applyGroup>[number];
/** What a write that committed came to. */
export type WriteOutcome = Extract<WorkerResult, { ok: true }>;
type WritePlans = Parameters<typeof applyGroup>[1];

/**
 * How long the writer waits before starting a new commit worker after one died, by attempt; the
 * last delay repeats. Short at first (a worker that died once is likely to start again), never
 * longer than the Retry-After clients are given, so a retry finds the writer back.
 */
const RESTART_DELAYS_MS = [100, 250, 500, 1_000, 2_000, 4_000] as const;

/**
 * Readiness tries the write path at most this often (a cheap BEGIN IMMEDIATE and ROLLBACK, or
 * after a failed write a one-page commit), and gives the try this long before saying not ready: a
 * write lock held elsewhere or a stalled disk shows as not ready in about a second.
 */
const PROBE_EVERY_MS = 1_000;
const PROBE_ANSWER_MS = 1_000;
/** A commit running longer than this is waiting for a lock or the disk: not ready meanwhile. */
const STALLED_COMMIT_MS = 1_000;

interface Committer {
  commit(writes: readonly WorkerWrite[]): Promise<WorkerResult[]>;
  /** Tries the write path: the lock only, or with `write` a commit too. */
  probe(write: boolean): Promise<void>;
  /** Rejects with DependencyUnavailableError while no connection can commit. */
  ready(): Promise<void>;
  durability(): Promise<DurabilitySettings>;
  /** Stops at once: what waits for the worker is failed as an outage. */
  close(): Promise<void>;
}

/** A write as the group carries it: with when it was submitted. */
interface Entry {
  write: WorkerWrite | { kind: 'probe'; commit: boolean };
  at: number;
}

/** The last time writes could not succeed, and why. */
interface WriteFailure {
  at: number;
  error: DependencyUnavailableError;
}

/** An error of SQLite (or of the worker) as the service answers it: an outage or a bug. */
/**
 * After a write failed for a full disk, the free space under which the service stays not ready,
 * whatever the write probe says: a one-page probe can fit in the WAL's slack where the next
 * create does not, and /readyz would flip to ready between refused creates.
 */
export const FULL_DISK_MIN_FREE_BYTES = 1024 * 1024;

/** Whether an error, or one of its causes, is SQLite's full disk (SQLITE_FULL). */
function isDiskFull(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_FULL')) return true;
    e = e.cause;
  }
  return false;
}

function storageError(message: string, code: string | undefined): Error {
  const error = Object.assign(new Error(message), { code });
  if (!isUnavailableCode(code)) return error;
  return new DependencyUnavailableError('database', {
    cause: new Error(`SQLite cannot write: ${message} (${code})`, { cause: error }),
  });
}

/**
 * SQLite's single writer: every write of the service (pets, Idempotency-Keys, api keys, purges)
 * goes through it, grouped (src/storage/sql/group-commit.ts) so one transaction and one fsync
 * (synchronous=FULL) acknowledge all the writes one turn of the event loop brought. For a file the
 * groups are committed by a worker thread on its own connection, so the event loop never waits for
 * the disk nor for the write lock; a worker that dies is replaced, and until then every write and
 * readiness answer DependencyUnavailableError (503 with Retry-After). An in-memory database
 * cannot be shared with a thread: it is written on the main connection.
 */
export class SqliteWriter implements SqlWrites {
  private readonly group: GroupCommit<Entry, WriteOutcome | undefined>;
  private committer: Committer | undefined;
  /** Set while writes cannot succeed (the last commit failed as an outage); cleared by a commit. */
  private failure: WriteFailure | undefined;
  /** When the commit now running started, if one is. */
  private committingSince: number | undefined;
  private probing: Promise<void> | undefined;
  private probedAt = 0;
  /** A write failed for a full disk and none has committed since (see FULL_DISK_MIN_FREE_BYTES). */
  private diskFull = false;
  /** Set by close(): new writes are refused; past the deadline, waiting ones are failed. */
  private closing: { expired: boolean } | undefined;
  /** Writes submitted and not answered yet (the observer's queue depth). */
  private unanswered = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly raw: BetterSqlite3.Database,
    /** The database file, or `:memory:`. */
    private readonly path: string,
    private readonly observer: StorageObserver = NO_STORAGE_OBSERVER,
  ) {
    this.group = new GroupCommit({ maxInFlight: 1, commit: (entries) => this.commit(entries) });
    observer.watchCommitQueue(() => this.unanswered);
  }

  async write(write: WorkerWrite): Promise<WriteOutcome> {
    if (this.closing !== undefined) throw this.unavailable('the SQLite writer is closing');
    this.unanswered += 1;
    try {
      const outcome = await this.group.submit({ write, at: performance.now() });
      if (outcome === undefined) throw new Error('a write answered as a probe');
      return outcome;
    } finally {
      this.unanswered -= 1;
    }
  }

  async run(statements: readonly CompiledQuery[]): Promise<number[]> {
    const outcome = await this.write({
      kind: 'statements',
      statements: statements.map(({ sql, parameters }) => ({ sql, parameters })),
    });
    if (outcome.kind !== 'changes') throw new Error(`statements answered as ${outcome.kind}`);
    return outcome.changes;
  }

  /**
   * Resolves when writes can succeed now; for readiness. Rejects with DependencyUnavailableError
   * while the worker is down, while a commit has been waiting longer than STALLED_COMMIT_MS (a
   * lock held elsewhere, a stalled disk), and while the write path fails: it is tried at most once
   * a PROBE_EVERY_MS, and a try that does not answer within PROBE_ANSWER_MS counts as failed.
   * After a failed write the try commits a page (a full disk or a read-only file shows only
   * then); otherwise it only takes and releases the lock.
   */
  async ready(): Promise<void> {
    if (this.closing !== undefined) throw this.unavailable('the SQLite writer is closing');
    await this.open().ready();
    if (this.diskFull) this.assertRoom();
    const since = this.committingSince;
    if (since !== undefined && performance.now() - since > STALLED_COMMIT_MS) {
      throw this.unavailable(`a commit has waited ${Math.round(performance.now() - since)} ms`);
    }
    if (performance.now() - this.probedAt >= PROBE_EVERY_MS) {
      this.probing ??= this.probe().finally(() => {
        this.probing = undefined;
      });
    }
    if (this.probing !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), PROBE_ANSWER_MS);
      });
      const answer = await Promise.race([this.probing.then(() => 'done' as const), late]);
      clearTimeout(timer);
      if (answer === 'late') throw this.unavailable('the write path did not answer in time');
    }
    if (this.failure !== undefined) throw this.failure.error;
  }

  /** The settings of the connection that commits, read back from it. */
  durability(): Promise<DurabilitySettings> {
    return this.open().durability();
  }

  /** Delivers the replies of writes whose commit the worker has answered (see WorkerCommitter.takeReplies). */
  pollCommitReplies(): void {
    if (this.committer instanceof WorkerCommitter) this.committer.takeReplies();
  }

  /**
   * Ends the commit worker as a crash would, leaving the writer to notice and start another: how
   * tests show the outage is visible and heals. Does nothing for an in-memory database.
   */
  async killWorkerForTests(): Promise<void> {
    if (this.committer instanceof WorkerCommitter) await this.committer.kill();
  }

  /**
   * Commits what was submitted, then stops the worker. With `deadlineMs`, writes still waiting
   * then (for another process's lock, a stalled disk) are answered DependencyUnavailableError
   * (503) and the worker is stopped, so a shutdown never waits longer: whether a write the worker
   * was committing at that moment is stored is unknown, and such a write was never acknowledged.
   */
  async close(options: { deadlineMs?: number } = {}): Promise<void> {
    const closing = (this.closing ??= { expired: false });
    const drained = this.group.drain();
    if (options.deadlineMs !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<'expired'>((resolve) => {
        timer = setTimeout(() => resolve('expired'), options.deadlineMs);
      });
      const outcome = await Promise.race([drained.then(() => 'drained' as const), expired]);
      clearTimeout(timer);
      if (outcome === 'expired') {
        closing.expired = true;
        // Fails the group the worker holds; the groups still queued are failed as they are taken.
        await this.committer?.close();
      }
    }
    await drained;
    await this.committer?.close();
  }

  /** Started on first use: the statements can be prepared only once the migrations ran. */
  private open(): Committer {
    this.committer ??=
      this.path === ':memory:'
        ? new ConnectionCommitter(this.db, this.raw, writePlans(this.db))
        : new WorkerCommitter(this.path, writePlans(this.db));
    return this.committer;
  }

  private async commit(
    entries: readonly Entry[],
  ): Promise<ReadonlyArray<Outcome<WriteOutcome | undefined>>> {
    if (this.closing?.expired === true) throw this.unavailable('the SQLite writer was closed');
    // Writes that were already waiting when writes last failed as an outage (a lock that stayed
    // taken for the whole busy timeout, a full disk) are answered with that failure now rather
    // than wait once more: no write waits for the lock much longer than the busy timeout.
    const failure = this.failure;
    const stale = (entry: Entry) => failure !== undefined && entry.at < failure.at;
    const fresh = entries.filter((entry) => !stale(entry));
    const writes = fresh.flatMap((entry) => (entry.write.kind === 'probe' ? [] : [entry.write]));
    const probes = fresh.filter((entry) => entry.write.kind === 'probe');
    let results: WorkerResult[] = [];
    this.committingSince = performance.now();
    try {
      for (const probe of probes) {
        await this.open().probe(probe.write.kind === 'probe' && probe.write.commit);
      }
      if (writes.length > 0) {
        const started = performance.now();
        results = await this.open().commit(writes);
        this.observer.commitDone(writes.length, (performance.now() - started) / 1000);
      }
      if (fresh.length > 0) {
        this.failure = undefined;
        this.diskFull = false;
      }
    } catch (error) {
      this.noteFailure(error);
      throw error;
    } finally {
      this.committingSince = undefined;
    }
    let next = 0;
    return entries.map((entry): Outcome<WriteOutcome | undefined> => {
      if (stale(entry) && failure !== undefined) return { ok: false, error: failure.error };
      if (entry.write.kind === 'probe') return { ok: true, value: undefined };
      const result = results[next++];
      if (result === undefined) return { ok: false, error: new Error('no result for a write') };
      if (result.ok) return { ok: true, value: result };
      const error = storageError(result.message, result.code);
      this.noteFailure(error);
      return { ok: false, error };
    });
  }

  /** Remembers an outage (not a bug) as the reason writes cannot succeed now. */
  private noteFailure(error: unknown): void {
    if (error instanceof DependencyUnavailableError) {
      this.failure = { at: performance.now(), error };
      if (isDiskFull(error)) this.diskFull = true;
    }
  }

  /** Throws while the database's file system has less room than FULL_DISK_MIN_FREE_BYTES. */
  private assertRoom(): void {
    if (this.path === ':memory:') return;
    let free: number;
    try {
      const stats = statfsSync(dirname(this.path));
      free = stats.bavail * stats.bsize;
    } catch {
      return; // not knowable here: the probe decides alone
    }
    if (free < FULL_DISK_MIN_FREE_BYTES) {
      throw this.unavailable(`the disk is full: ${free} bytes free where the database is`);
    }
  }

  /** One try of the write path, queued with the writes so that it never runs beside a commit. */
  private async probe(): Promise<void> {
    this.probedAt = performance.now();
    try {
      await this.group.submit({
        write: { kind: 'probe', commit: this.failure !== undefined },
        at: performance.now(),
      });
    } catch (error) {
      this.noteFailure(error);
    }
  }

  private unavailable(message: string): DependencyUnavailableError {
    return new DependencyUnavailableError('database', { cause: new Error(message) });
  }
}

/** Commits on the main connection: for `:memory:`, the only connection that sees the data. */
class ConnectionCommitter implements Committer {
  private readonly prepare: ReturnType<typeof statementCache>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly raw: BetterSqlite3.Database,
    private readonly plans: WritePlans,
  ) {
    this.prepare = statementCache(raw);
  }

  async commit(writes: readonly WorkerWrite[]): Promise<WorkerResult[]> {
    // Holding Kysely's lock on the connection, so a group never lands inside a transaction Kysely
    // has open across awaits (a migration, say).
    try {
      return await this.db
        .connection()
        .execute(async () =>
          applyGroup(this.raw, this.plans, this.prepare, [...writes], MAX_PET_ID),
        );
    } catch (error) {
      const failure = error as { message?: unknown; code?: unknown };
      throw storageError(
        String(failure.message ?? error),
        typeof failure.code === 'string' ? failure.code : undefined,
      );
    }
  }

  /** No other connection can hold a lock on a database that lives in this one. */
  async probe(): Promise<void> {}

  async ready(): Promise<void> {}

  async durability(): Promise<DurabilitySettings> {
    return readSqliteDurability(this.raw);
  }

  async close(): Promise<void> {}
}

/** What the worker answers an ask with, on its answers channel. */
type ChannelAnswer =
  | { id: number; results: WorkerResult[] }
  | { id: number; probed: true }
  | { id: number; durability: DurabilitySettings }
  | { id: number; error: { message: string; code: string | undefined } };

/** The answers of one worker: the port, the count the worker keeps, and how many were taken. */
interface AnswerChannel {
  readonly port: MessagePort;
  readonly answered: Int32Array;
  taken: number;
}

/** Sends groups to a worker thread that commits them on a connection of its own. */
class WorkerCommitter implements Committer {
  private worker: Worker | undefined;
  /** Resolves when the current worker has opened its connection, or failed to. */
  private started: Promise<void> = Promise.resolve();
  /** Why no worker can commit now; cleared by the next worker that starts. */
  private down: DependencyUnavailableError | undefined;
  private readonly waiting = new Map<
    number,
    { resolve(answer: ChannelAnswer): void; reject(error: unknown): void }
  >();
  private nextId = 0;
  private restarts = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Where the current worker's answers come, and how many of them were taken. */
  private channel: AnswerChannel | undefined;
  /** Set to 1 by close(): the worker stops waiting for the write lock (see takeWriteLock). */
  private readonly cancel = new SharedArrayBuffer(4);

  constructor(
    private readonly path: string,
    private readonly plans: WritePlans,
  ) {
    this.start();
  }

  async commit(writes: readonly WorkerWrite[]): Promise<WorkerResult[]> {
    const answer = await this.ask({ writes });
    if ('results' in answer) return answer.results;
    throw this.failed(answer);
  }

  async probe(write: boolean): Promise<void> {
    const answer = await this.ask({ probe: { write } });
    if (!('probed' in answer)) throw this.failed(answer);
  }

  private failed(answer: ChannelAnswer): Error {
    if ('error' in answer) return storageError(answer.error.message, answer.error.code);
    return new Error('the commit worker answered out of turn');
  }

  async ready(): Promise<void> {
    await this.started;
    if (this.down !== undefined) throw this.down;
  }

  async durability(): Promise<DurabilitySettings> {
    const answer = await this.ask({ query: 'durability' });
    if ('durability' in answer) return answer.durability;
    throw new Error('the commit worker did not report its settings');
  }

  async kill(): Promise<void> {
    await this.worker?.terminate();
  }

  /**
   * Stops the worker at once: a wait for the lock ends at its next slice, and what waited for the
   * worker is answered as an outage now rather than when the worker ends (a thread inside SQLite
   * stops only when SQLite returns).
   */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.restartTimer);
    Atomics.store(new Int32Array(this.cancel), 0, 1);
    const worker = this.worker;
    this.worker = undefined;
    this.channel?.port.close();
    this.channel = undefined;
    const failure = this.unavailable(new Error('the SQLite writer is closed'));
    for (const waiter of this.waiting.values()) waiter.reject(failure);
    this.waiting.clear();
    await worker?.terminate();
  }

  private async ask(message: object): Promise<ChannelAnswer> {
    await this.ready();
    const worker = this.worker;
    if (worker === undefined) throw this.unavailable(new Error('the commit worker is stopped'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, ...message });
    });
  }

  private start(): void {
    // Answers come on a channel of their own, counted in shared memory, so that takeReplies
    // can take them between two requests (receiveMessageOnPort) instead of at the event loop's
    // next poll.
    const { port1: answers, port2 } = new MessageChannel();
    const answered = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(new URL('./sqlite-commit-worker.js', import.meta.url), {
      workerData: {
        role: 'sqlite-commit',
        path: this.path,
        plans: this.plans,
        maxPetId: MAX_PET_ID,
        cancel: this.cancel,
        answers: port2,
        answered: answered.buffer,
      },
      transferList: [port2],
    });
    this.worker = worker;
    const channel: AnswerChannel = { port: answers, answered, taken: 0 };
    this.channel = channel;
    answers.on('message', (answer: ChannelAnswer) => this.take(channel, answer));
    this.started = new Promise((resolve) => {
      worker.on('message', (answer: { ready: true }) => {
        if ('ready' in answer) {
          this.down = undefined;
          this.restarts = 0;
          resolve();
        }
      });
      // An uncaught error is followed by 'exit'; whichever comes first ends this worker.
      const lost = (cause: Error) => {
        this.lost(worker, cause);
        resolve();
      };
      worker.on('error', lost);
      worker.on('exit', (code) =>
        lost(new Error(`the SQLite commit worker exited (code ${code})`)),
      );
    });
  }

  /**
   * Delivers now the replies the worker has sent: called as each request arrives (through
   * Storage.pollCommitReplies), it answers a commit that ended while the event loop was busy with
   * other requests at once, where the message event would come only at the loop's next poll,
   * milliseconds later under load. One load of shared memory when there is nothing to take.
   */
  takeReplies(): void {
    const channel = this.channel;
    if (channel === undefined || Atomics.load(channel.answered, 0) === channel.taken) return;
    this.takeAll(channel);
  }

  private takeAll(channel: AnswerChannel): void {
    for (
      let received = receiveMessageOnPort(channel.port);
      received !== undefined;
      received = receiveMessageOnPort(channel.port)
    ) {
      this.take(channel, received.message as ChannelAnswer);
    }
  }

  private take(channel: AnswerChannel, answer: ChannelAnswer): void {
    channel.taken += 1;
    const waiter = this.waiting.get(answer.id);
    this.waiting.delete(answer.id);
    waiter?.resolve(answer);
  }

  /** The worker died: its writes fail as an outage, and another one starts after a delay. */
  private lost(worker: Worker, cause: Error): void {
    if (worker !== this.worker) return;
    // What it answered before it died is taken first: those asks did come to an end.
    if (this.channel !== undefined) this.takeAll(this.channel);
    this.channel?.port.close();
    this.channel = undefined;
    this.worker = undefined;
    const failure = this.unavailable(cause);
    this.down = failure;
    // Whether their group committed before the worker died is unknown; they are answered 503.
    for (const waiter of this.waiting.values()) waiter.reject(failure);
    this.waiting.clear();
    if (this.closed) return;
    const delay = RESTART_DELAYS_MS[Math.min(this.restarts, RESTART_DELAYS_MS.length - 1)];
    this.restarts += 1;
    this.restartTimer = setTimeout(() => {
      if (!this.closed) this.start();
    }, delay);
    this.restartTimer.unref();
  }

  private unavailable(cause: Error): DependencyUnavailableError {
    return new DependencyUnavailableError('database', {
      cause: new Error(`SQLite writer down: ${cause.message}`, { cause }),
    });
  }
}

/** The pet write queries, compiled once, for the committer (which may run in another thread). */
function writePlans(db: Kysely<Database>): WritePlans {
  const plan = <P extends object>(
    build: (db: Kysely<Database>, params: P) => Compilable,
    names: ReadonlyArray<keyof P>,
  ) => {
    const compiled = compileOnce<P>((params) => build(db, params), names);
    return {
      sql: compiled.sql,
      slots: compiled.slots.map((slot) => ('name' in slot ? { name: String(slot.name) } : slot)),
    };
  };
  return {
    insert: plan<ReturnType<typeof toRow>>(petQueries.insert, [
      'name',
      'categoryId',
      'status',
      'createdAt',
    ]),
    takeKey: plan<Parameters<typeof petQueries.takeKey>[1]>(petQueries.takeKey, [
      'apiKeyId',
      'key',
      'fingerprint',
      'now',
      'expiredBefore',
    ]),
    readKey: plan<KeyParams>(petQueries.readKey, ['apiKeyId', 'key']),
    pointKeyAtPet: plan<KeyParams & { petId: number }>(petQueries.pointKeyAtPet, [
      'apiKeyId',
      'key',
      'petId',
    ]),
  };
}
