import type { Selectable } from 'kysely';
import { isPetStatus, MAX_PET_ID, type NewPet, type Pet } from '../../domain/pets/pet.js';
import type { IdempotentOutcome } from '../../domain/ports.js';
import { type PetsTable, toBigInt, toNumber, toOptionalNumber } from './database.js';
import type { NewPetRow } from './pet-queries.js';

/** Pets to rows and back, the same for every SQL backend. */
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
