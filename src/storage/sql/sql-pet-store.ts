import type { Kysely, Selectable, Transaction } from 'kysely';
import {
  isPetStatus,
  MAX_PET_ID,
  type NewPet,
  type Pet,
  type PetStatus,
} from '../../domain/pets/pet.js';
import type { IdempotentCreate, IdempotentOutcome, PetStore } from '../../domain/ports.js';
import { type Database, type PetsTable, toBigInt, toNumber, toOptionalNumber } from './database.js';
import type { DialectTraits } from './dialect-traits.js';

const INSERT_BATCH = 500;
/** How long a create waits for another request holding the same Idempotency-Key to commit. */
const IDEMPOTENCY_LOCK_WAIT_MS = 1_000;
/** Thrown inside the transaction only to roll it back; never leaves this file. */
const KEY_HELD = Symbol('Idempotency-Key held by a running request');

function toPet(row: Pick<Selectable<PetsTable>, 'id' | 'name' | 'category_id' | 'status'>): Pet {
  const pet: Pet = { id: toNumber(row.id), name: row.name, categoryId: toBigInt(row.category_id) };
  if (row.status !== null && isPetStatus(row.status)) pet.status = row.status;
  return pet;
}

function toRow(input: NewPet, now: number) {
  return {
    name: input.name,
    category_id: input.categoryId,
    status: input.status ?? null,
    created_at: now,
  };
}

async function insertPet(trx: Transaction<Database>, input: NewPet, now: number): Promise<Pet> {
  const { id } = await trx
    .insertInto('pets')
    .values(toRow(input, now))
    .returning('id')
    .executeTakeFirstOrThrow();
  const petId = toNumber(id);
  // Ids must stay readable by every JavaScript client; refusing here rolls the insert back.
  if (petId > MAX_PET_ID) throw new Error('pet ids are exhausted (2^53 - 1 reached)');
  return { id: petId, ...input };
}

export class SqlPetStore implements PetStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly traits: DialectTraits,
    /** The engine's answer to PetStore.settledThrough (see each backend folder). */
    readonly settledThrough: () => number,
    private readonly now: () => number = Date.now,
  ) {}

  async list(query: { afterId: number; status?: PetStatus; limit: number }): Promise<Pet[]> {
    let select = this.db
      .selectFrom('pets')
      .select(['id', 'name', 'category_id', 'status'])
      .where('id', '>', query.afterId);
    if (query.status !== undefined) select = select.where('status', '=', query.status);
    const rows = await select.orderBy('id').limit(query.limit).execute();
    return rows.map(toPet);
  }

  async get(id: bigint): Promise<Pet | undefined> {
    const row = await this.db
      .selectFrom('pets')
      .select(['id', 'name', 'category_id', 'status'])
      .where('id', '=', id)
      .executeTakeFirst();
    return row === undefined ? undefined : toPet(row);
  }

  async create(input: NewPet): Promise<Pet> {
    return this.db.transaction().execute((trx) => insertPet(trx, input, this.now()));
  }

  async createIdempotent(input: NewPet, request: IdempotentCreate): Promise<IdempotentOutcome> {
    const { scope, fingerprint, now } = request;
    return this.db
      .transaction()
      .execute(async (trx): Promise<IdempotentOutcome> => {
        await this.traits.boundLockWaits(trx, IDEMPOTENCY_LOCK_WAIT_MS);
        // Takes the key unless a record within retention holds it. A record without a pet can only
        // be an older version's claim whose request died: it is taken over too. Under PostgreSQL,
        // a concurrent request's uncommitted record makes this wait: for its commit (then it is a
        // replay or a mismatch below) or its rollback (then the key is free).
        const taken = await trx
          .insertInto('idempotency_keys')
          .values({
            api_key_id: scope.apiKeyId,
            key: scope.key,
            fingerprint,
            pet_id: null,
            created_at: now,
            locked_at: now,
          })
          .onConflict((oc) =>
            oc
              .columns(['api_key_id', 'key'])
              .doUpdateSet({ fingerprint, pet_id: null, created_at: now, locked_at: now })
              .where((eb) =>
                eb.or([
                  eb('idempotency_keys.created_at', '<=', now - request.retentionMs),
                  eb('idempotency_keys.pet_id', 'is', null),
                ]),
              ),
          )
          .returning('api_key_id')
          .executeTakeFirst()
          .catch((error: unknown) => {
            throw this.traits.isLockTimeout(error) ? KEY_HELD : error;
          });
        // Only the key may be reported as held; any other wait is the statement timeout's.
        await this.traits.boundLockWaits(trx, undefined);
        if (taken === undefined) {
          const row = await trx
            .selectFrom('idempotency_keys')
            .select(['fingerprint', 'pet_id'])
            .where('api_key_id', '=', scope.apiKeyId)
            .where('key', '=', scope.key)
            .executeTakeFirstOrThrow();
          const petId = toOptionalNumber(row.pet_id);
          if (petId === undefined) return { kind: 'in_progress' };
          return row.fingerprint === fingerprint ? { kind: 'replay', petId } : { kind: 'mismatch' };
        }
        const pet = await insertPet(trx, input, this.now());
        await trx
          .updateTable('idempotency_keys')
          .set({ pet_id: pet.id })
          .where('api_key_id', '=', scope.apiKeyId)
          .where('key', '=', scope.key)
          .execute();
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
        const rows = inputs.slice(start, start + INSERT_BATCH).map((input) => toRow(input, now));
        await trx.insertInto('pets').values(rows).execute();
      }
    });
    return inputs.length;
  }
}
