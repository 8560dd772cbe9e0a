import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import type { Compilable, Kysely } from 'kysely';
import { MAX_PET_ID, type NewPet, type Pet, type PetStatus } from '../../domain/pets/pet.js';
import type { IdempotentCreate, IdempotentOutcome, PetStore } from '../../domain/ports.js';
import type { Database } from '../sql/database.js';
import { type KeyParams, type ListParams, petQueries } from '../sql/pet-queries.js';
import { bind, type CompiledQueryPlan, compileOnce } from '../sql/prepared-sql.js';
import { checkedPetId, keyOutcome, toPet, toRow } from '../sql/sql-pet-store.js';
import { applyGroup, prepareWrites } from './sqlite-commit-worker.js';

type PetRow = Parameters<typeof toPet>[0];

/** A pet from a row of PET_COLUMNS as an array: id, name, category_id, status. */
function petOfRow(row: unknown[]): Pet {
  const [id, name, categoryId, status] = row as [bigint, string, bigint, string | null];
  return toPet({ id, name, category_id: categoryId, status });
}

/** A write waiting for the next group commit, and how to answer it. */
type Write =
  | ({ kind: 'create'; input: NewPet } & Settle<Pet>)
  | ({ kind: 'idempotent'; input: NewPet; request: IdempotentCreate } & Settle<IdempotentOutcome>);
interface Settle<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

/** A statement prepared once, and its query plan for binding parameters. */
class Prepared<P extends object> {
  private readonly statement: BetterSqlite3.Statement;
  constructor(
    raw: BetterSqlite3.Database,
    private readonly plan: CompiledQueryPlan<P>,
  ) {
    this.statement = raw.prepare(plan.sql);
  }
  /**
   * Rows as arrays of the selected columns, in their order: no object per row, for the hot reads.
   * (The statement answers in arrays from then on; only list statements are read this way.)
   */
  rows(params: P): unknown[][] {
    return this.statement.raw(true).all(...bind(this.plan, params)) as unknown[][];
  }
  get<R>(params: P): R | undefined {
    return this.statement.get(...bind(this.plan, params)) as R | undefined;
  }
  run(params: P): void {
    this.statement.run(...bind(this.plan, params));
  }
}

/** Every query of the store, compiled and prepared once. */
function prepareStatements(db: Kysely<Database>, raw: BetterSqlite3.Database) {
  const prepare = <P extends object>(
    build: (db: Kysely<Database>, params: P) => Compilable,
    names: ReadonlyArray<keyof P>,
  ) =>
    new Prepared<P>(
      raw,
      compileOnce<P>((params) => build(db, params), names),
    );
  return {
    listAll: prepare<ListParams>(petQueries.listAll, ['afterId', 'limit']),
    listByStatus: prepare<ListParams & { status: string }>(petQueries.listByStatus, [
      'afterId',
      'limit',
      'status',
    ]),
    getById: prepare<{ id: bigint }>(petQueries.getById, ['id']),
    insert: prepare<ReturnType<typeof toRow>>(petQueries.insert, [
      'name',
      'categoryId',
      'status',
      'createdAt',
    ]),
  };
}

/**
 * SQLite's pet store: the shared queries (src/storage/sql/pet-queries.ts) as statements prepared
 * once, run synchronously on the connection (better-sqlite3), so a read costs no query building
 * and no preparing. Writes are committed in groups: the creates that arrive while the event loop
 * is busy wait for the next turn and share one transaction, so one fsync (synchronous=FULL)
 * acknowledges them all. Each still resolves only after that commit; each runs in a savepoint of
 * its own, so one that fails leaves the others to commit.
 */
export class SqlitePetStore implements PetStore {
  private prepared: ReturnType<typeof prepareStatements> | undefined;
  private committer: Committer | undefined;
  private readonly commitGroup: () => void;
  private pending: Write[] = [];
  private scheduled = false;
  /** A group is being committed: the writes arriving meanwhile wait and form the next one. */
  private committing = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly raw: BetterSqlite3.Database,
    /** The database file, or `:memory:` (which a worker thread cannot share). */
    private readonly path: string,
    private readonly now: () => number = Date.now,
  ) {
    this.commitGroup = () => void this.flush();
  }

  /** Prepared on first use: the tables exist only once the migrations ran. */
  private get statements(): ReturnType<typeof prepareStatements> {
    this.prepared ??= prepareStatements(this.db, this.raw);
    return this.prepared;
  }

  /** One writer at a time, ids taken inside it: a visible id means every lower one is visible. */
  settledThrough(): number {
    return MAX_PET_ID;
  }

  async list(query: { afterId: number; status?: PetStatus; limit: number }): Promise<Pet[]> {
    const { afterId, limit, status } = query;
    const rows =
      status === undefined
        ? this.statements.listAll.rows({ afterId, limit })
        : this.statements.listByStatus.rows({ afterId, limit, status });
    return rows.map(petOfRow);
  }

  async get(id: bigint): Promise<Pet | undefined> {
    const row = this.statements.getById.get<PetRow>({ id });
    return row === undefined ? undefined : toPet(row);
  }

  create(input: NewPet): Promise<Pet> {
    return new Promise((resolve, reject) =>
      this.enqueue({ kind: 'create', input, resolve, reject }),
    );
  }

  createIdempotent(input: NewPet, request: IdempotentCreate): Promise<IdempotentOutcome> {
    return new Promise((resolve, reject) =>
      this.enqueue({ kind: 'idempotent', input, request, resolve, reject }),
    );
  }

  async insertMany(inputs: readonly NewPet[]): Promise<number> {
    const now = this.now();
    // One transaction: a seed that fails halfway leaves nothing behind.
    await this.withConnection(() =>
      this.raw.transaction(() => {
        for (const input of inputs) {
          const row = this.statements.insert.get<{ id: bigint }>(toRow(input, now));
          if (row !== undefined) checkedPetId(row.id);
        }
      })(),
    );
    return inputs.length;
  }

  /** Waits for the group being committed, then stops the committer (and its worker). */
  async close(): Promise<void> {
    while (this.committing || this.pending.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await this.committer?.close();
  }

  private enqueue(write: Write): void {
    this.pending.push(write);
    if (this.scheduled || this.committing) return;
    this.scheduled = true;
    // After the requests this turn of the event loop brings: they join the same commit.
    setImmediate(this.commitGroup);
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    if (this.committing || this.pending.length === 0) return;
    const group = this.pending.splice(0, MAX_GROUP);
    this.committing = true;
    const now = this.now();
    try {
      this.committer ??= this.openCommitter();
      const results = await this.committer.commit(group.map((write) => toWorkerWrite(write, now)));
      group.forEach((write, i) => settle(write, results[i]));
    } catch (error) {
      // The commit itself failed (disk full, I/O error): nothing of the group is stored.
      for (const write of group) write.reject(error);
    } finally {
      this.committing = false;
      if (this.pending.length > 0 && !this.scheduled) {
        this.scheduled = true;
        setImmediate(this.commitGroup);
      }
    }
  }

  /** A worker thread for a file; the connection itself for an in-memory database. */
  private openCommitter(): Committer {
    const plans = writePlans(this.db);
    if (this.path === ':memory:') {
      const statements = prepareWrites(this.raw, plans);
      return {
        commit: (writes) =>
          this.withConnection(() => applyGroup(this.raw, plans, statements, writes, MAX_PET_ID)),
        close: async () => undefined,
      };
    }
    return new WorkerCommitter(this.path, plans);
  }

  /**
   * Runs `work` (synchronous) holding Kysely's lock on the connection, so it never lands inside a
   * transaction Kysely has open across awaits (a migration, say).
   */
  private withConnection<T>(work: () => T): Promise<T> {
    return this.db.connection().execute(async () => work());
  }
}

/** The most writes one group commits; more wait for the next. */
const MAX_GROUP = 500;

interface Committer {
  commit(writes: WorkerWrite[]): Promise<WriteResult[]>;
  close(): Promise<void>;
}

/** Sends groups to a worker thread that commits them on a connection of its own. */
class WorkerCommitter implements Committer {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Settle<WriteResult[]>>();
  private nextId = 0;
  private failure: Error | undefined;

  constructor(path: string, plans: WritePlans) {
    this.worker = new Worker(new URL('./sqlite-commit-worker.js', import.meta.url), {
      workerData: { role: 'sqlite-commit', path, plans, maxPetId: MAX_PET_ID },
    });
    this.worker.on('message', (answer: { id: number; results?: WriteResult[]; error?: string }) => {
      const waiter = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      if (answer.results !== undefined) waiter?.resolve(answer.results);
      else waiter?.reject(new Error(answer.error ?? 'the commit failed'));
    });
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => this.fail(new Error(`the commit worker exited (${code})`)));
  }

  commit(writes: WorkerWrite[]): Promise<WriteResult[]> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, writes });
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
  }
}

type WritePlans = Parameters<typeof prepareWrites>[1];
type WorkerWrite = Parameters<typeof applyGroup>[3][number];
type WriteResult = ReturnType<typeof applyGroup>[number];

/** The write queries, compiled once, for the committer (which may run in another thread). */
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

function toWorkerWrite(write: Write, now: number): WorkerWrite {
  const row = { ...toRow(write.input, now) };
  if (write.kind === 'create') return { kind: 'create', row };
  const { scope, fingerprint, retentionMs } = write.request;
  const key = { apiKeyId: scope.apiKeyId, key: scope.key };
  return {
    kind: 'idempotent',
    row,
    key,
    take: {
      ...key,
      fingerprint,
      now: write.request.now,
      expiredBefore: write.request.now - retentionMs,
    },
  };
}

/** Answers one write from what its savepoint did. */
function settle(write: Write, result: WriteResult | undefined): void {
  if (result === undefined) {
    write.reject(new Error('the commit gave no result for a write'));
  } else if (!result.ok) {
    write.reject(Object.assign(new Error(result.message), { code: result.code }));
  } else if (result.kind === 'created') {
    const pet: Pet = { id: Number(result.id), ...write.input };
    if (write.kind === 'create') write.resolve(pet);
    else write.resolve({ kind: 'created', pet });
  } else if (write.kind === 'idempotent') {
    write.resolve(
      keyOutcome(
        { fingerprint: result.fingerprint, pet_id: result.petId },
        write.request.fingerprint,
      ),
    );
  } else {
    write.reject(new Error('a plain create answered as an Idempotency-Key'));
  }
}
