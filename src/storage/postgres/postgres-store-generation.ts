import { type Kysely, sql } from 'kysely';
import type { GenerationReading, StoreGeneration } from '../../domain/ports.js';
import type { Database } from '../sql/database.js';
import type { IdHorizon } from './postgres-id-horizon.js';

/**
 * The store generation on PostgreSQL, as one text value of three parts:
 * - the counter row, bumped by `petstore cache-reset` and by every migration applied;
 * - the oid of the pets table, which a restore of a dump (pg_restore --clean, psql of a --clean
 *   dump, or into a recreated database) changes, since it creates the table anew, while the
 *   counter row comes back with the dump as it was;
 * - when the server started: a point-in-time recovery, a failover to a replica or a restore of a
 *   file-level backup all restart it (and a plain restart merely invalidates the caches once).
 * A restore of data only into the existing tables changes none of these: `petstore cache-reset`
 * after it (docs/caching.md), though a highest id that falls is noticed too (IdHorizon).
 */
export const STORE_GENERATION_SQL = sql<string>`concat_ws(':',
  (SELECT value FROM store_generation WHERE id = 1),
  to_regclass('pets')::oid,
  extract(epoch FROM pg_postmaster_start_time()))`;

export class PostgresStoreGeneration implements StoreGeneration {
  constructor(
    private readonly db: Kysely<Database>,
    /** Its poll reads the generation and the id horizon in one query. */
    private readonly horizon: IdHorizon,
  ) {}

  read(): Promise<GenerationReading> {
    return this.horizon.poll();
  }

  async bump(): Promise<void> {
    await bumpStoreGeneration(this.db);
  }
}

/** On any connection, e.g. the migrations' own. */
export async function bumpStoreGeneration<DB>(db: Kysely<DB>): Promise<void> {
  await sql`UPDATE store_generation SET value = value + 1 WHERE id = 1`.execute(db);
}
