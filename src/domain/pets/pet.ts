export const PET_STATUSES = ['available', 'pending', 'sold'] as const;
export type PetStatus = (typeof PET_STATUSES)[number];

/** Largest value of an int64 field (categoryId, petId on input). */
export const INT64_MAX = 9223372036854775807n;
/** Ids are assigned by the database and kept at or below this so every JavaScript client reads them exactly. */
export const MAX_PET_ID = Number.MAX_SAFE_INTEGER;

export const PAGE_SIZE = { default: 20, min: 1, max: 100 } as const;
export const NAME_MAX_CODE_POINTS = 100;

export interface NewPet {
  name: string;
  /** int64, kept exactly: a bigint because values above 2^53 are allowed. */
  categoryId: bigint;
  /** Absent when the client sent none: no default status is invented. */
  status?: PetStatus;
}

export interface Pet extends NewPet {
  id: number;
}

export function isPetStatus(value: unknown): value is PetStatus {
  return typeof value === 'string' && (PET_STATUSES as readonly string[]).includes(value);
}
