import type BetterSqlite3 from 'better-sqlite3';
import { type Compilable, type Kysely, sql } from 'kysely';
import { MAX_PET_ID, type NewPet, type Pet, type PetStatus } from '../../domain/pets/pet.js';
import type { IdempotentCreate, IdempotentOutcome, PetStore } from '../../domain/ports.js';
import type { Database } from '../sql/database.js';
import { isPageRowCount, type ListParams, petQueries } from '../sql/pet-queries.js';
import { checkedPetId, keyOutcome, toPet, toRow } from '../sql/pet-rows.js';
import { bind, type CompiledQueryPlan, compileOnce } from '../sql/prepared-sql.js';
import type { SqliteConnection } from './sqlite-connection.js';
import type { SqliteWriter } from './sqlite-writer.js';

type PetRow = Parameters<typeof toPet>[0];

/** A pet from a row of PET_COLUMNS as an array: id, name, category_id, status. */
function petOfRow(row: unknown[]): Pet {
  const [id, name, categoryId, status] = row as [bigint, string, bigint, string | null];
  return toPet({ id, name, category_id: categoryId, status });
}

/** A statement prepared once, and its query plan for binding parameters. */
class Prepared<P extends object> {
  private readonly statement: BetterSqlite3.Statement;
  constructor(
    raw: BetterSqlite3.Database,
    private readonly plan: CompiledQueryPlan<P>,
    private readonly guard: () => void,
  ) {
    this.statement = raw.prepare(plan.sql);
  }
  get sql(): string {
    return this.plan.sql;
  }
  /**
   * Rows as arrays of the selected columns, in their order: no object per row, for the hot reads.
   * (The statement answers in arrays from then on; only list statements are read this way.)
   */
  rows(params: P): unknown[][] {
    this.guard();
    return this.statement.raw(true).all(...bind(this.plan, params)) as unknown[][];
  }
  get<R>(params: P): R | undefined {
    this.guard();
    return this.statement.get(...bind(this.plan, params)) as R | undefined;
  }
  run(params: P): void {
    this.guard();
    this.statement.run(...bind(this.plan, params));
  }
}

type Prepare = <P extends object>(
  build: (db: Kysely<Database>, params: P) => Compilable,
  names: ReadonlyArray<keyof P>,
) => Prepared<P>;

const preparer =
  ({ db, raw, guard }: SqliteConnection): Prepare =>
  (build, names) =>
    new Prepared(
      raw,
      compileOnce((params) => build(db, params), names),
      guard,
    );

/** Every query of the store, compiled and prepared once. */
function prepareStatements(prepare: Prepare) {
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
 * once and read synchronously on the connection (better-sqlite3), so a read costs no query
 * building and no preparing. Every create goes to the single writer (sqlite-writer.ts), which
 * commits it in a group, each write in a savepoint of its own, and resolves only after the commit.
 */
export class SqlitePetStore implements PetStore {
  private prepared: ReturnType<typeof prepareStatements> | undefined;
  private readonly prepare: Prepare;
  /**
   * The page reads, one statement per status and page size with both written in the SQL text and
   * only the cursor bound. SQLite compiles a statement again on the first step after a new value is
   * bound to a parameter whose value the planner looked at, and it looks at `LIMIT ?` and at
   * `status = ?`: better-sqlite3 binds every parameter on every call, so each page was parsed and
   * planned anew (`sqlite3Reprepare`, about half of a page's cost). Bounded: 4 kinds of page (all,
   * or one of 3 statuses) by the row counts of isPageRowCount;
   * test/storage/sqlite-page-statements.test.ts counts them.
   */
  private readonly pageReads = new Map<string, Prepared<{ afterId: number }>>();

  constructor(
    private readonly connection: SqliteConnection,
    private readonly writer: SqliteWriter,
    private readonly now: () => number = Date.now,
  ) {
    this.prepare = preparer(connection);
  }

  /** Prepared on first use: the tables exist only once the migrations ran. */
  private get statements(): ReturnType<typeof prepareStatements> {
    this.prepared ??= prepareStatements(this.prepare);
    return this.prepared;
  }

  /** One writer at a time, ids taken inside it: a visible id means every lower one is visible. */
  idHorizon(): number {
    return MAX_PET_ID;
  }

  async list(query: { afterId: number; status?: PetStatus; limit: number }): Promise<Pet[]> {
    return this.listNow(query);
  }

  listNow(query: { afterId: number; status?: PetStatus; limit: number }): Pet[] {
    const { afterId, limit, status } = query;
    if (!isPageRowCount(limit)) {
      // Not a page size the API asks for: one statement with the limit bound, not one per value.
      const rows =
        status === undefined
          ? this.statements.listAll.rows({ afterId, limit })
          : this.statements.listByStatus.rows({ afterId, limit, status });
      return rows.map(petOfRow);
    }
    return this.pageRead(status, limit).rows({ afterId }).map(petOfRow);
  }

  /** How many page statements are prepared (tests: they stay bounded). */
  get preparedPages(): number {
    return this.pageReads.size;
  }

  /** The SQL a page of this status and size runs (tests: only the cursor is a parameter). */
  pageSql(status: PetStatus | undefined, limit: number): string {
    return this.pageRead(status, limit).sql;
  }

  private pageRead(status: PetStatus | undefined, limit: number): Prepared<{ afterId: number }> {
    const key = `${status ?? ''} ${limit}`;
    let read = this.pageReads.get(key);
    if (read === undefined) {
      const lit = sql.lit(limit);
      read =
        status === undefined
          ? this.prepare(
              (db, p: { afterId: number }) => petQueries.listAll(db, { ...p, limit: lit }),
              ['afterId'],
            )
          : this.prepare(
              (db, p: { afterId: number }) =>
                petQueries.listByStatus(db, { ...p, limit: lit, status: sql.lit(status) }),
              ['afterId'],
            );
      this.pageReads.set(key, read);
    }
    return read;
  }

  async get(id: bigint): Promise<Pet | undefined> {
    const row = this.statements.getById.get<PetRow>({ id });
    return row === undefined ? undefined : toPet(row);
  }

  async create(input: NewPet): Promise<Pet> {
    const outcome = await this.writer.write({
      kind: 'create',
      row: { ...toRow(input, this.now()) },
    });
    if (outcome.kind !== 'created') throw new Error(`a create answered as ${outcome.kind}`);
    return { id: Number(outcome.id), ...input };
  }

  async createIdempotent(input: NewPet, request: IdempotentCreate): Promise<IdempotentOutcome> {
    const { scope, fingerprint, retentionMs, now } = request;
    const key = { apiKeyId: scope.apiKeyId, key: scope.key };
    const outcome = await this.writer.write({
      kind: 'idempotent',
      row: { ...toRow(input, this.now()) },
      key,
      take: { ...key, fingerprint, now, expiredBefore: now - retentionMs },
    });
    if (outcome.kind === 'created')
      return { kind: 'created', pet: { id: Number(outcome.id), ...input } };
    if (outcome.kind === 'key') {
      return keyOutcome({ fingerprint: outcome.fingerprint, pet_id: outcome.petId }, fingerprint);
    }
    throw new Error(`an Idempotency-Key create answered as ${outcome.kind}`);
  }

  /**
   * For `petstore seed` (a process of its own, before or beside the server): one transaction on the
   * main connection, so a seed that fails halfway leaves nothing behind.
   */
  async insertMany(inputs: readonly NewPet[]): Promise<number> {
    const now = this.now();
    // Holding Kysely's lock on the connection, so it never lands inside a transaction Kysely has
    // open across awaits (a migration, say).
    await this.connection.db.connection().execute(async () =>
      this.connection.raw.transaction(() => {
        for (const input of inputs) {
          const row = this.statements.insert.get<{ id: bigint }>(toRow(input, now));
          if (row !== undefined) checkedPetId(row.id);
        }
      })(),
    );
    return inputs.length;
  }
}
