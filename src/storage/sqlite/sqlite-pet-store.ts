import type BetterSqlite3 from 'better-sqlite3';
import type { Compilable, Kysely } from 'kysely';
import { MAX_PET_ID, type NewPet, type Pet, type PetStatus } from '../../domain/pets/pet.js';
import type { IdempotentCreate, IdempotentOutcome, PetStore } from '../../domain/ports.js';
import type { Database } from '../sql/database.js';
import { type KeyParams, type ListParams, petQueries } from '../sql/pet-queries.js';
import { bind, type CompiledQueryPlan, compileOnce } from '../sql/prepared-sql.js';
import { checkedPetId, keyOutcome, toPet, toRow } from '../sql/sql-pet-store.js';

type PetRow = Parameters<typeof toPet>[0];

/** A pet from a row of PET_COLUMNS as an array: id, name, category_id, status. */
function petOfRow(row: unknown[]): Pet {
  const [id, name, categoryId, status] = row as [bigint, string, bigint, string | null];
  return toPet({ id, name, category_id: categoryId, status });
}

/** A write waiting for the next group commit, and how to answer it. */
type Write =
  | { kind: 'create'; input: NewPet; done: Settle<Pet> }
  | {
      kind: 'idempotent';
      input: NewPet;
      request: IdempotentCreate;
      done: Settle<IdempotentOutcome>;
    };
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
    takeKey: prepare<Parameters<typeof petQueries.takeKey>[1]>(petQueries.takeKey, [
      'apiKeyId',
      'key',
      'fingerprint',
      'now',
      'expiredBefore',
    ]),
    readKey: prepare<KeyParams>(petQueries.readKey, ['apiKeyId', 'key']),
    pointKeyAtPet: prepare<KeyParams & { petId: number }>(petQueries.pointKeyAtPet, [
      'apiKeyId',
      'key',
      'petId',
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
  private readonly commitGroup: () => void;
  private pending: Write[] = [];
  private scheduled = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly raw: BetterSqlite3.Database,
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
      this.enqueue({ kind: 'create', input, done: { resolve, reject } }),
    );
  }

  createIdempotent(input: NewPet, request: IdempotentCreate): Promise<IdempotentOutcome> {
    return new Promise((resolve, reject) =>
      this.enqueue({ kind: 'idempotent', input, request, done: { resolve, reject } }),
    );
  }

  async insertMany(inputs: readonly NewPet[]): Promise<number> {
    const now = this.now();
    // One transaction: a seed that fails halfway leaves nothing behind.
    await this.withConnection(() =>
      this.raw.transaction(() => {
        for (const input of inputs) this.insert(input, now);
      })(),
    );
    return inputs.length;
  }

  private enqueue(write: Write): void {
    this.pending.push(write);
    if (this.scheduled) return;
    this.scheduled = true;
    // After the requests this turn of the event loop brings: they join the same commit.
    setImmediate(this.commitGroup);
  }

  private async flush(): Promise<void> {
    const group = this.pending;
    this.pending = [];
    this.scheduled = false;
    const outcomes: Array<() => void> = [];
    try {
      await this.withConnection(() =>
        this.raw.transaction(() => {
          const now = this.now();
          for (const write of group) outcomes.push(this.apply(write, now));
        })(),
      );
    } catch (error) {
      // The commit itself failed (disk full, I/O error): nothing of the group is stored.
      for (const write of group) write.done.reject(error);
      return;
    }
    for (const settle of outcomes) settle();
  }

  /** Runs one write in a savepoint of the group's transaction; returns how to answer it. */
  private apply(write: Write, now: number): () => void {
    try {
      if (write.kind === 'create') {
        const pet = this.raw.transaction(() => this.insert(write.input, now))();
        return () => write.done.resolve(pet);
      }
      const outcome = this.raw.transaction(() =>
        this.idempotent(write.input, write.request, now),
      )();
      return () => write.done.resolve(outcome);
    } catch (error) {
      return () => write.done.reject(error);
    }
  }

  private insert(input: NewPet, now: number): Pet {
    const row = this.statements.insert.get<{ id: bigint }>(toRow(input, now));
    if (row === undefined) throw new Error('INSERT ... RETURNING gave no row');
    return { id: checkedPetId(row.id), ...input };
  }

  private idempotent(input: NewPet, request: IdempotentCreate, now: number): IdempotentOutcome {
    const key = { apiKeyId: request.scope.apiKeyId, key: request.scope.key };
    const taken = this.statements.takeKey.get({
      ...key,
      fingerprint: request.fingerprint,
      now: request.now,
      expiredBefore: request.now - request.retentionMs,
    });
    if (taken === undefined) {
      const row = this.statements.readKey.get<{ fingerprint: string; pet_id: bigint | null }>(key);
      if (row === undefined) throw new Error('an Idempotency-Key neither taken nor found');
      return keyOutcome(row, request.fingerprint);
    }
    const pet = this.insert(input, now);
    this.statements.pointKeyAtPet.run({ ...key, petId: pet.id });
    return { kind: 'created', pet };
  }

  /**
   * Runs `work` (synchronous) holding Kysely's lock on the connection, so it never lands inside a
   * transaction Kysely has open across awaits (a migration, say).
   */
  private withConnection<T>(work: () => T): Promise<T> {
    return this.db.connection().execute(async () => work());
  }
}
