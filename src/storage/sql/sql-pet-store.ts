import type { Kysely, Selectable, Transaction } from 'kysely';
import {
  isPetStatus,
  MAX_PET_ID,
  type NewPet,
  type Pet,
  type PetStatus,
} from '../../domain/pets/pet.js';
import type { CreateOutcome, IdempotencyCompletion, PetStore } from '../../domain/ports.js';
import { type Database, type PetsTable, toBigInt, toNumber } from './database.js';

const INSERT_BATCH = 500;
/** Thrown inside the transaction only to roll it back; never leaves this file. */
const CLAIM_LOST = Symbol('claim lost');

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

  async createForClaim(input: NewPet, claim: IdempotencyCompletion): Promise<CreateOutcome> {
    return this.db
      .transaction()
      .execute(async (trx): Promise<CreateOutcome> => {
        const pet = await insertPet(trx, input, this.now());
        const result = await trx
          .updateTable('idempotency_keys')
          .set({ pet_id: pet.id })
          .where('api_key_id', '=', claim.apiKeyId)
          .where('key', '=', claim.key)
          .where('fingerprint', '=', claim.fingerprint)
          .where('pet_id', 'is', null)
          .executeTakeFirst();
        // Throwing rolls the pet back; the outcome below tells the caller why.
        if (result.numUpdatedRows !== 1n) throw CLAIM_LOST;
        return { kind: 'created', pet };
      })
      .catch((error: unknown) => {
        if (error === CLAIM_LOST) return { kind: 'claim_lost' } as const;
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
