import type { Kysely, Selectable, Transaction } from 'kysely';
import {
  isPetStatus,
  MAX_PET_ID,
  type NewPet,
  type Pet,
  type PetStatus,
} from '../../domain/pets/pet.js';
import { DependencyUnavailableError } from '../../domain/errors.js';
import type { IdempotentCreate, IdempotentOutcome, PetStore } from '../../domain/ports.js';
import { type Database, type PetsTable, toBigInt, toNumber, toOptionalNumber } from './database.js';
import type { DialectTraits } from './dialect-traits.js';
import { type NewPetRow, petQueries } from './pet-queries.js';

const INSERT_BATCH = 500;
/** The most creates one shared transaction takes; more wait for the next. */
const MAX_GROUP = 200;
/** How long a create waits for another request holding the same Idempotency-Key to commit. */
const IDEMPOTENCY_LOCK_WAIT_MS = 1_000;
/** Thrown inside the transaction only to roll it back; never leaves this file. */
const KEY_HELD = Symbol('Idempotency-Key held by a running request');

export function toPet(
  row: Pick<Selectable<PetsTable>, 'id' | 'name' | 'category_id' | 'status'>,
): Pet {
  const pet: Pet = { id: toNumber(row.id), name: row.name, categoryId: toBigInt(row.category_id) };
  if (row.status !== null && isPetStatus(row.status)) pet.status = row.status;
  return pet;
}

export function toRow(input: NewPet, now: number): NewPetRow {
  return {
    name: input.name,
    categoryId: input.categoryId,
    status: input.status ?? null,
    createdAt: now,
  };
}

/** Ids must stay readable by every JavaScript client; refusing an id above that rolls it back. */
export function checkedPetId(id: bigint | number | string): number {
  const petId = toNumber(id);
  if (petId > MAX_PET_ID) throw new Error('pet ids are exhausted (2^53 - 1 reached)');
  return petId;
}

async function insertPet(trx: Transaction<Database>, input: NewPet, now: number): Promise<Pet> {
  const { id } = await petQueries.insert(trx, toRow(input, now)).executeTakeFirstOrThrow();
  return { id: checkedPetId(id), ...input };
}

/**
 * The pet store that runs each query through Kysely, as built: PostgreSQL's. (SQLite runs the same
 * queries as statements prepared once, with creates committed in groups: sqlite-pet-store.ts.)
 */
export class SqlPetStore implements PetStore {
  /** Creates waiting for the next shared commit. */
  private pending: Array<{ input: NewPet; resolve(pet: Pet): void; reject(error: unknown): void }> =
    [];
  private readonly commitGroup = () => void this.flush();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly traits: DialectTraits,
    /** The engine's answer to PetStore.settledThrough (see each backend folder). */
    readonly settledThrough: () => number,
    private readonly now: () => number = Date.now,
  ) {}

  async list(query: { afterId: number; status?: PetStatus; limit: number }): Promise<Pet[]> {
    const { afterId, limit, status } = query;
    const rows = await (
      status === undefined
        ? petQueries.listAll(this.db, { afterId, limit })
        : this.traits.statusPageAsIndexRange
          ? petQueries.listByStatusAsIndexRange(this.db, { afterId, limit, status })
          : petQueries.listByStatus(this.db, { afterId, limit, status })
    ).execute();
    return rows.map(toPet);
  }

  async get(id: bigint): Promise<Pet | undefined> {
    const row = await petQueries.getById(this.db, { id }).executeTakeFirst();
    return row === undefined ? undefined : toPet(row);
  }

  /**
   * Creates that arrive while the event loop is busy share one transaction (one commit, one
   * connection). Each resolves only after that commit. If the shared transaction fails for
   * anything but an outage, each create is tried again on its own, so one bad row fails alone.
   */
  create(input: NewPet): Promise<Pet> {
    return new Promise((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (this.pending.length === 1) setImmediate(this.commitGroup);
    });
  }

  private async flush(): Promise<void> {
    const group = this.pending.splice(0, MAX_GROUP);
    if (this.pending.length > 0) setImmediate(this.commitGroup);
    const alone = (input: NewPet) =>
      this.db.transaction().execute((trx) => insertPet(trx, input, this.now()));
    try {
      const pets = await this.db.transaction().execute(async (trx) => {
        const created: Pet[] = [];
        for (const { input } of group) created.push(await insertPet(trx, input, this.now()));
        return created;
      });
      group.forEach((write, i) => write.resolve(pets[i] as Pet));
    } catch (error) {
      if (group.length === 1 || error instanceof DependencyUnavailableError) {
        for (const write of group) write.reject(error);
        return;
      }
      await Promise.all(group.map((write) => alone(write.input).then(write.resolve, write.reject)));
    }
  }

  async createIdempotent(input: NewPet, request: IdempotentCreate): Promise<IdempotentOutcome> {
    const { scope, fingerprint, now } = request;
    const key = { apiKeyId: scope.apiKeyId, key: scope.key };
    return this.db
      .transaction()
      .execute(async (trx): Promise<IdempotentOutcome> => {
        await this.traits.boundLockWaits(trx, IDEMPOTENCY_LOCK_WAIT_MS);
        // A concurrent request's uncommitted record makes this wait: for its commit (then it is
        // a replay or a mismatch below) or its rollback (then the key is free).
        const taken = await petQueries
          .takeKey(trx, { ...key, fingerprint, now, expiredBefore: now - request.retentionMs })
          .executeTakeFirst()
          .catch((error: unknown) => {
            throw this.traits.isLockTimeout(error) ? KEY_HELD : error;
          });
        // Only the key may be reported as held; any other wait is the statement timeout's.
        await this.traits.boundLockWaits(trx, undefined);
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
}

/** What a key already taken says to a request with this fingerprint. */
export function keyOutcome(
  row: { fingerprint: string; pet_id: bigint | number | string | null },
  fingerprint: string,
): IdempotentOutcome {
  const petId = toOptionalNumber(row.pet_id);
  // Only a request still running leaves a record without its pet (see takeKey).
  if (petId === undefined) return { kind: 'in_progress' };
  return row.fingerprint === fingerprint ? { kind: 'replay', petId } : { kind: 'mismatch' };
}
