import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import { domainErrors } from '../errors.js';
import type { IdempotencyStore, PetStore } from '../ports.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { NewPet, Pet, PetStatus } from './pet.js';

/** What a listing is asked for; each distinct query is its own page. */
export interface PageQuery {
  limit: number;
  status?: PetStatus;
  cursor?: string;
}

export interface ListPetsResult {
  pets: Pet[];
  /** Present only when more pets exist after this page. */
  nextCursor?: string;
  /**
   * True when this page can never change: it is full, and no pet can appear among its ids later
   * (v1 neither updates nor deletes pets, and every id up to the next page's first is below the id horizon).
   */
  final: boolean;
}

export interface CreatePetResult {
  pet: Pet;
  /** True when an earlier request with the same Idempotency-Key and body created this pet. */
  replayed: boolean;
}

const afterIdOf = (query: PageQuery): number =>
  query.cursor === undefined ? 0 : decodeCursor(query.cursor, query.status);

/** The store's read for a page: one extra row tells whether a next page exists. */
const rowsFor = (query: PageQuery, afterId: number) => ({
  afterId,
  limit: query.limit + 1,
  ...(query.status ? { status: query.status } : {}),
});

/** Idempotency records are kept this long (Stripe's 24 hours). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

export class PetService {
  constructor(
    private readonly pets: PetStore,
    private readonly idempotency: IdempotencyStore,
    private readonly clock: Clock,
  ) {}

  async list(query: PageQuery): Promise<ListPetsResult> {
    const afterId = afterIdOf(query);
    return this.pageOf(query, await this.pets.list(rowsFor(query, afterId)));
  }

  /** Whether listNow can answer: the store reads synchronously. */
  get listsNow(): boolean {
    return this.pets.listNow !== undefined;
  }

  /**
   * The page now, when the store reads synchronously (listsNow); undefined when it cannot. Throws
   * what `list` would reject with: a bad cursor, a store error.
   */
  listNow(query: PageQuery): ListPetsResult | undefined {
    if (this.pets.listNow === undefined) return undefined;
    return this.pageOf(query, this.pets.listNow(rowsFor(query, afterIdOf(query))));
  }

  private pageOf(query: PageQuery, rows: Pet[]): ListPetsResult {
    const next = rows[query.limit];
    if (next === undefined) return { pets: rows, final: false };
    const pets = rows.slice(0, query.limit);
    const last = pets[pets.length - 1] ?? next;
    return {
      pets,
      nextCursor: encodeCursor(last.id, query.status),
      final: next.id <= this.pets.idHorizon(),
    };
  }

  /**
   * Deletes idempotency records past their retention, at most `batch` at a time, until none is left
   * or `maxBatches` ran; returns how many. Any instance may run it: the store lets concurrent
   * purges share the work instead of waiting on each other.
   */
  async purgeExpiredIdempotency(batch: number, maxBatches: number): Promise<number> {
    const before = this.clock.now() - IDEMPOTENCY_RETENTION_MS;
    let purged = 0;
    for (let i = 0; i < maxBatches; i++) {
      const deleted = await this.idempotency.purgeExpired(before, batch);
      purged += deleted;
      if (deleted < batch) break;
    }
    return purged;
  }

  async get(id: bigint): Promise<Pet> {
    const pet = await this.pets.get(id);
    if (pet === undefined) throw domainErrors.petNotFound(id);
    return pet;
  }

  async create(
    input: NewPet,
    idempotency?: { apiKeyId: string; key: string },
  ): Promise<CreatePetResult> {
    if (idempotency === undefined) return { pet: await this.pets.create(input), replayed: false };
    const outcome = await this.pets.createIdempotent(input, {
      scope: idempotency,
      fingerprint: fingerprint(input),
      now: this.clock.now(),
      retentionMs: IDEMPOTENCY_RETENTION_MS,
    });
    switch (outcome.kind) {
      case 'created':
        return { pet: outcome.pet, replayed: false };
      case 'replay':
        return { pet: await this.get(BigInt(outcome.petId)), replayed: true };
      case 'mismatch':
        throw domainErrors.idempotencyKeyReused();
      case 'in_progress':
        throw domainErrors.idempotencyKeyInUse();
    }
  }
}

/** Same JSON value, same fingerprint: key order, white space and number spelling do not matter. */
export function fingerprint(input: NewPet): string {
  const canonical = JSON.stringify([input.name, input.categoryId.toString(), input.status ?? null]);
  return createHash('sha256').update(canonical).digest('hex');
}
