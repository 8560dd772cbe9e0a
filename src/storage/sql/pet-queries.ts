import type { Kysely, RawBuilder } from 'kysely';
import { PAGE_SIZE } from '../../domain/pets/pet.js';
import type { Database } from './database.js';

/**
 * The pet and idempotency-key queries every SQL backend runs: built with Kysely from named
 * parameters. PostgreSQL builds them per call (postgres/postgres-pet-store.ts); SQLite compiles
 * each one once into a prepared statement (sqlite/sqlite-pet-store.ts, sqlite/sqlite-writer.ts).
 */
/** In this order: SQLite reads list rows as arrays of these columns (sqlite-pet-store.ts). */
const PET_COLUMNS = ['id', 'name', 'category_id', 'status'] as const;

export interface ListParams {
  afterId: number;
  /** A parameter, or a literal in the SQL text (the prepared pages of both stores). */
  limit: number | RawBuilder<number>;
}

/**
 * Whether `limit` is a row count a page of the API reads: 1 to PAGE_SIZE.max, plus the row that
 * tells whether a next page exists. Both stores prepare one statement per such count, so they stay
 * bounded; any other count runs with the limit bound.
 */
export function isPageRowCount(limit: number): boolean {
  return Number.isSafeInteger(limit) && limit >= 1 && limit <= PAGE_SIZE.max + 1;
}

/** A parameter, or a literal in the SQL text (SQLite's prepared pages: sqlite-pet-store.ts). */
type StatusParam = { status: string | RawBuilder<string> };

export interface NewPetRow {
  name: string;
  categoryId: bigint;
  status: string | null;
  createdAt: number;
}

export interface KeyParams {
  apiKeyId: string;
  key: string;
}

export interface TakeKeyParams extends KeyParams {
  fingerprint: string;
  now: number;
  /** Records created at or before this have expired and may be taken over. */
  expiredBefore: number;
}

export const petQueries = {
  listAll: (db: Kysely<Database>, p: ListParams) =>
    db
      .selectFrom('pets')
      .select(PET_COLUMNS)
      .where('id', '>', p.afterId)
      .orderBy('id')
      .limit(p.limit),

  listByStatus: (db: Kysely<Database>, p: ListParams & StatusParam) =>
    db
      .selectFrom('pets')
      .select(PET_COLUMNS)
      .where('id', '>', p.afterId)
      .where('status', '=', p.status)
      .orderBy('id')
      .limit(p.limit),

  /**
   * listByStatus written as one range of the (status, id) index: from (status, afterId) up to the
   * end of the status. Same rows, same order. PostgreSQL needs it: with `status = ? AND id > ?
   * ORDER BY id` it may walk the primary key and filter, betting from statistics that matches come
   * soon; when the status's pets all lie behind the cursor (the last page of a rare status) that
   * walk reads every newer pet. Statistics lag behind inserts, and a generic plan ignores the
   * values, so the bet is lost in normal operation. A range on (status, id) can only be served in
   * order by that index. (SQLite plans the plain form well and the range badly: it keeps listByStatus.)
   */
  listByStatusAsIndexRange: (db: Kysely<Database>, p: ListParams & { status: string }) =>
    db
      .selectFrom('pets')
      .select(PET_COLUMNS)
      .where((eb) => eb(eb.refTuple('status', 'id'), '>', eb.tuple(p.status, p.afterId)))
      .where('status', '<=', p.status)
      .orderBy('status')
      .orderBy('id')
      .limit(p.limit),

  getById: (db: Kysely<Database>, p: { id: bigint }) =>
    db.selectFrom('pets').select(PET_COLUMNS).where('id', '=', p.id),

  insert: (db: Kysely<Database>, p: NewPetRow) =>
    db
      .insertInto('pets')
      .values({
        name: p.name,
        category_id: p.categoryId,
        status: p.status,
        created_at: p.createdAt,
      })
      .returning('id'),

  /**
   * Takes an Idempotency-Key unless a record within retention holds it. A record without a pet
   * can only be an older version's claim whose request died: it is taken over too.
   */
  takeKey: (db: Kysely<Database>, p: TakeKeyParams) =>
    db
      .insertInto('idempotency_keys')
      .values({
        api_key_id: p.apiKeyId,
        key: p.key,
        fingerprint: p.fingerprint,
        pet_id: null,
        created_at: p.now,
        locked_at: p.now,
      })
      .onConflict((oc) =>
        oc
          .columns(['api_key_id', 'key'])
          .doUpdateSet({
            fingerprint: p.fingerprint,
            pet_id: null,
            created_at: p.now,
            locked_at: p.now,
          })
          .where((eb) =>
            eb.or([
              eb('idempotency_keys.created_at', '<=', p.expiredBefore),
              eb('idempotency_keys.pet_id', 'is', null),
            ]),
          ),
      )
      .returning('api_key_id'),

  readKey: (db: Kysely<Database>, p: KeyParams) =>
    db
      .selectFrom('idempotency_keys')
      .select(['fingerprint', 'pet_id'])
      .where('api_key_id', '=', p.apiKeyId)
      .where('key', '=', p.key),

  pointKeyAtPet: (db: Kysely<Database>, p: KeyParams & { petId: number }) =>
    db
      .updateTable('idempotency_keys')
      .set({ pet_id: p.petId })
      .where('api_key_id', '=', p.apiKeyId)
      .where('key', '=', p.key),
};
