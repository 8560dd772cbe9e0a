import { type Compilable, CompiledQuery, type Kysely, sql, type Transaction } from 'kysely';
import type { NewPet, Pet, PetStatus } from '../../domain/pets/pet.js';
import { DependencyUnavailableError } from '../../domain/errors.js';
import type { IdempotentCreate, IdempotentOutcome, PetStore } from '../../domain/ports.js';
import type { Database } from '../sql/database.js';
import { GroupCommit, type Outcome } from '../sql/group-commit.js';
import { isPageRowCount, petQueries } from '../sql/pet-queries.js';
import { checkedPetId, keyOutcome, toPet, toRow } from '../sql/pet-rows.js';
import { bind, type CompiledQueryPlan, compileOnce } from '../sql/prepared-sql.js';
import { prepareByName } from './postgres-connection.js';

type PetRow = Parameters<typeof toPet>[0];

/**
 * A read compiled once (no Kysely building per call) and run as a named prepared statement: the
 * server parses it once per connection, and plans it once too when it takes the generic plan.
 */
class PreparedRead<P extends object> {
  private readonly plan: CompiledQueryPlan<P>;

  constructor(
    private readonly db: Kysely<Database>,
    build: (db: Kysely<Database>, params: P) => Compilable,
    names: ReadonlyArray<keyof P>,
  ) {
    this.plan = compileOnce<P>((params) => build(db, params), names);
    prepareByName(this.plan.sql);
  }

  async rows(params: P): Promise<PetRow[]> {
    const query = CompiledQuery.raw(this.plan.sql, bind(this.plan, params));
    return (await this.db.executeQuery<PetRow>(query)).rows;
  }
}

const INSERT_BATCH = 500;
/** How long a create waits for another request holding the same Idempotency-Key to commit. */
const IDEMPOTENCY_LOCK_WAIT_MS = 1_000;
/** Thrown inside the transaction only to roll it back; never leaves this file. */
const KEY_HELD = Symbol('Idempotency-Key held by a running request');

async function insertPet(trx: Transaction<Database>, input: NewPet, now: number): Promise<Pet> {
  const { id } = await petQueries.insert(trx, toRow(input, now)).executeTakeFirstOrThrow();
  return { id: checkedPetId(id), ...input };
}

/**
 * Bounds how long the next statements of the transaction wait for a row another transaction holds
 * (an Idempotency-Key whose first request is still running), or lifts the bound (`undefined`).
 */
async function boundLockWaits(trx: Transaction<Database>, ms: number | undefined): Promise<void> {
  await (
    ms === undefined
      ? sql`SET LOCAL lock_timeout TO DEFAULT`
      : sql`SET LOCAL lock_timeout = ${sql.lit(`${ms}ms`)}`
  ).execute(trx);
}

/** Whether an error is that bound running out (the row is still held). */
const isLockTimeout = (error: unknown) => (error as { code?: unknown } | null)?.code === '55P03';

/**
 * PostgreSQL's pet store: each query built by Kysely and run on the pool. Creates are committed in
 * groups (src/storage/sql/group-commit.ts), several groups side by side on the pool's connections.
 */
export class PostgresPetStore implements PetStore {
  private readonly creates: GroupCommit<NewPet, Pet>;
  private readonly getById: PreparedRead<{ id: bigint }>;
  /**
   * The page reads, one statement per page size with the LIMIT written in it: with `LIMIT $n` the
   * server's estimate for an unknown limit (a tenth of the rows) makes its generic plan look
   * dearer than a custom one, so it planned every call anew (pg_prepared_statements showed
   * custom_plans only); with the limit in the text it keeps the generic plan after five calls,
   * which spares PostgreSQL planning each page (bench/results/). The generic plans are
   * sound: the status page is asked as an index range for that reason (see
   * petQueries.listByStatusAsIndexRange and test/storage/query-plans.test.ts). Bounded: page
   * sizes are those of isPageRowCount.
   */
  private readonly pageReads = new Map<string, PreparedRead<{ afterId: number; status: string }>>();

  constructor(
    private readonly db: Kysely<Database>,
    /** The id horizon (see postgres-id-horizon.ts). */
    readonly idHorizon: () => number,
    poolMax: number,
    private readonly now: () => number = Date.now,
  ) {
    this.getById = new PreparedRead(db, petQueries.getById, ['id']);
    this.creates = new GroupCommit({
      maxInFlight: poolMax,
      commit: (group) => this.commitCreates(group),
    });
  }

  async list(query: { afterId: number; status?: PetStatus; limit: number }): Promise<Pet[]> {
    const { afterId, limit, status } = query;
    if (!isPageRowCount(limit)) {
      // Not a page size the API asks for: planned for its values, never prepared.
      const rows = await (
        status === undefined
          ? petQueries.listAll(this.db, { afterId, limit })
          : petQueries.listByStatusAsIndexRange(this.db, { afterId, limit, status })
      ).execute();
      return rows.map(toPet);
    }
    const rows = await this.pageRead(status !== undefined, limit).rows({
      afterId,
      status: status ?? '',
    });
    return rows.map(toPet);
  }

  private pageRead(byStatus: boolean, limit: number) {
    const key = `${byStatus ? 'status' : 'all'} ${limit}`;
    let read = this.pageReads.get(key);
    if (read === undefined) {
      const lit = sql.lit(limit);
      read = byStatus
        ? new PreparedRead(
            this.db,
            (db, p: { afterId: number; status: string }) =>
              petQueries.listByStatusAsIndexRange(db, { ...p, limit: lit }),
            ['afterId', 'status'],
          )
        : new PreparedRead(
            this.db,
            (db, p: { afterId: number; status: string }) =>
              petQueries.listAll(db, { afterId: p.afterId, limit: lit }),
            ['afterId'],
          );
      this.pageReads.set(key, read);
    }
    return read;
  }

  async get(id: bigint): Promise<Pet | undefined> {
    const [row] = await this.getById.rows({ id });
    return row === undefined ? undefined : toPet(row);
  }

  create(input: NewPet): Promise<Pet> {
    return this.creates.submit(input);
  }

  /**
   * One transaction for the group. If it fails for anything but an outage, each create is tried
   * again on its own, so one bad row fails alone.
   */
  private async commitCreates(group: readonly NewPet[]): Promise<Array<Outcome<Pet>>> {
    try {
      const pets = await this.db.transaction().execute(async (trx) => {
        const created: Pet[] = [];
        for (const input of group) created.push(await insertPet(trx, input, this.now()));
        return created;
      });
      return pets.map((value) => ({ ok: true, value }));
    } catch (error) {
      if (group.length === 1 || error instanceof DependencyUnavailableError) throw error;
      return Promise.all(
        group.map((input) =>
          this.db
            .transaction()
            .execute((trx) => insertPet(trx, input, this.now()))
            .then(
              (value): Outcome<Pet> => ({ ok: true, value }),
              (failure: unknown): Outcome<Pet> => ({ ok: false, error: failure }),
            ),
        ),
      );
    }
  }

  async createIdempotent(input: NewPet, request: IdempotentCreate): Promise<IdempotentOutcome> {
    const { scope, fingerprint, now } = request;
    const key = { apiKeyId: scope.apiKeyId, key: scope.key };
    return this.db
      .transaction()
      .execute(async (trx): Promise<IdempotentOutcome> => {
        // Under READ COMMITTED two requests may hold the same key: the second one waits, bounded.
        await boundLockWaits(trx, IDEMPOTENCY_LOCK_WAIT_MS);
        // A concurrent request's uncommitted record makes this wait: for its commit (then it is
        // a replay or a mismatch below) or its rollback (then the key is free).
        const taken = await petQueries
          .takeKey(trx, { ...key, fingerprint, now, expiredBefore: now - request.retentionMs })
          .executeTakeFirst()
          .catch((error: unknown) => {
            throw isLockTimeout(error) ? KEY_HELD : error;
          });
        // Only the key may be reported as held; any other wait is the statement timeout's.
        await boundLockWaits(trx, undefined);
        if (taken === undefined) {
          const row = await petQueries.readKey(trx, key).executeTakeFirstOrThrow();
          return keyOutcome(row, fingerprint);
        }
        const pet = await insertPet(trx, input, this.now());
        await petQueries.pointKeyAtPet(trx, { ...key, petId: pet.id }).execute();
        return { kind: 'created', pet };
      })
      .catch((error: unknown) => {
        if (error === KEY_HELD) return { kind: 'in_progress' } as const;
        throw error;
      });
  }

  async insertMany(inputs: readonly NewPet[]): Promise<number> {
    const now = this.now();
    // One transaction: a seed that fails halfway leaves nothing behind.
    await this.db.transaction().execute(async (trx) => {
      for (let start = 0; start < inputs.length; start += INSERT_BATCH) {
        const rows = inputs.slice(start, start + INSERT_BATCH).map((input) => ({
          name: input.name,
          category_id: input.categoryId,
          status: input.status ?? null,
          created_at: now,
        }));
        await trx.insertInto('pets').values(rows).execute();
      }
    });
    return inputs.length;
  }

  /** Waits until every create submitted has its answer. */
  close(): Promise<void> {
    return this.creates.drain();
  }
}
