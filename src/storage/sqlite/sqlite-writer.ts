import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import { DependencyUnavailableError } from '../../domain/errors.js';
import { MAX_PET_ID } from '../../domain/pets/pet.js';
import type { DurabilitySettings } from '../../domain/ports.js';
import type { Database } from '../sql/database.js';
import type { SqlWrites } from '../sql/dialect-traits.js';
import { GroupCommit, type Settled } from '../sql/group-commit.js';
import { type KeyParams, petQueries } from '../sql/pet-queries.js';
import type { toRow } from '../sql/pet-rows.js';
import { compileOnce } from '../sql/prepared-sql.js';
import { applyGroup, statementCache } from './sqlite-commit-worker.js';
import { readSqliteDurability } from './sqlite-settings.js';

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

interface Committer {
  commit(writes: readonly WorkerWrite[]): Promise<WorkerResult[]>;
  /** Rejects with DependencyUnavailableError while no connection can commit. */
  ready(): Promise<void>;
  durability(): Promise<DurabilitySettings>;
  close(): Promise<void>;
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
  private readonly group: GroupCommit<WorkerWrite, WriteOutcome>;
  private committer: Committer | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly raw: BetterSqlite3.Database,
    /** The database file, or `:memory:`. */
    private readonly path: string,
  ) {
    this.group = new GroupCommit({
      maxInFlight: 1,
      commit: async (writes) => (await this.open().commit(writes)).map(settled),
    });
  }

  write(write: WorkerWrite): Promise<WriteOutcome> {
    return this.group.submit(write);
  }

  async run(statements: readonly CompiledQuery[]): Promise<number[]> {
    const outcome = await this.write({
      kind: 'statements',
      statements: statements.map(({ sql, parameters }) => ({ sql, parameters })),
    });
    if (outcome.kind !== 'changes') throw new Error(`statements answered as ${outcome.kind}`);
    return outcome.changes;
  }

  /** Resolves when a connection is ready to commit; for readiness. */
  ready(): Promise<void> {
    return this.open().ready();
  }

  /** The settings of the connection that commits, read back from it. */
  durability(): Promise<DurabilitySettings> {
    return this.open().durability();
  }

  /**
   * Ends the commit worker as a crash would, leaving the writer to notice and start another: how
   * tests show the outage is visible and heals. Does nothing for an in-memory database.
   */
  async killWorkerForTests(): Promise<void> {
    if (this.committer instanceof WorkerCommitter) await this.committer.kill();
  }

  /** Commits what was submitted, then stops the worker. */
  async close(): Promise<void> {
    await this.group.drain();
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
}

function settled(result: WorkerResult): Settled<WriteOutcome> {
  if (result.ok) return { ok: true, value: result };
  return { ok: false, error: Object.assign(new Error(result.message), { code: result.code }) };
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

  commit(writes: readonly WorkerWrite[]): Promise<WorkerResult[]> {
    // Holding Kysely's lock on the connection, so a group never lands inside a transaction Kysely
    // has open across awaits (a migration, say).
    return this.db
      .connection()
      .execute(async () => applyGroup(this.raw, this.plans, this.prepare, [...writes], MAX_PET_ID));
  }

  async ready(): Promise<void> {}

  async durability(): Promise<DurabilitySettings> {
    return readSqliteDurability(this.raw);
  }

  async close(): Promise<void> {}
}

type WorkerAnswer =
  | { ready: true }
  | { id: number; results: WorkerResult[] }
  | { id: number; durability: DurabilitySettings }
  | { id: number; error: string };

/** Sends groups to a worker thread that commits them on a connection of its own. */
class WorkerCommitter implements Committer {
  private worker: Worker | undefined;
  /** Settles when the current worker has opened its connection, or failed to. */
  private started: Promise<void> = Promise.resolve();
  /** Why no worker can commit now; cleared by the next worker that starts. */
  private down: DependencyUnavailableError | undefined;
  private readonly waiting = new Map<
    number,
    { resolve(answer: WorkerAnswer): void; reject(error: unknown): void }
  >();
  private nextId = 0;
  private restarts = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly path: string,
    private readonly plans: WritePlans,
  ) {
    this.start();
  }

  async commit(writes: readonly WorkerWrite[]): Promise<WorkerResult[]> {
    const answer = await this.ask({ writes });
    if ('results' in answer) return answer.results;
    throw new Error('error' in answer ? answer.error : 'the commit worker answered out of turn');
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

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.restartTimer);
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private async ask(message: object): Promise<WorkerAnswer> {
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
    const worker = new Worker(new URL('./sqlite-commit-worker.js', import.meta.url), {
      workerData: {
        role: 'sqlite-commit',
        path: this.path,
        plans: this.plans,
        maxPetId: MAX_PET_ID,
      },
    });
    this.worker = worker;
    this.started = new Promise((resolve) => {
      worker.on('message', (answer: WorkerAnswer) => {
        if ('ready' in answer) {
          this.down = undefined;
          this.restarts = 0;
          resolve();
          return;
        }
        const waiter = this.waiting.get(answer.id);
        this.waiting.delete(answer.id);
        waiter?.resolve(answer);
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

  /** The worker died: its writes fail as an outage, and another one starts after a delay. */
  private lost(worker: Worker, cause: Error): void {
    if (worker !== this.worker) return;
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
