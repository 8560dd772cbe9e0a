import { type Kysely, sql } from 'kysely';
import type { Database } from '../sql/database.js';
import type { GenerationReading } from '../../domain/ports.js';
import { STORE_GENERATION_SQL } from './postgres-store-generation.js';

/**
 * PostgreSQL takes a pet's id from its sequence when the INSERT runs, before the transaction
 * commits, so a pet with a lower id than one already visible may still appear. Once a transaction
 * can no longer be running, every id it took has committed or never will: ids up to the highest
 * one visible `lagMs` ago have committed or will never appear. Each poll records the highest visible id, and
 * idHorizon answers from that history without I/O on the request path.
 *
 * The poll is the store generation's read (PostgresStoreGeneration): one query a second, made
 * while the instance caches answers (src/domain/cache/store-cache.ts), reads both in one snapshot.
 * When the generation changes, or the highest id falls (pets vanished: a restore of data only,
 * rows deleted by hand), the history starts over from nothing, and the generation it reports
 * changes too, so the caches are invalidated in the same step.
 */
export class IdHorizon {
  private history: Array<{ at: number; maxId: number }> = [];
  private horizon = 0;
  /** The generation as the database names it, and the highest id seen within it. */
  private base: string | undefined;
  private highest = 0;
  /** Times the highest id fell within one generation: this instance's part of the generation. */
  private fallsBack = 0;

  constructor(
    private readonly db: Kysely<Database>,
    /** Longer than any transaction that inserts pets can run (see postgres-storage.ts). */
    private readonly lagMs: number,
    private readonly monotonicNow: () => number = () => performance.now(),
  ) {}

  /** See PetStore.idHorizon. */
  idHorizon(): number {
    const cutoff = this.monotonicNow() - this.lagMs;
    while (this.history.length > 0 && (this.history[0]?.at ?? Infinity) <= cutoff) {
      const seen = this.history.shift();
      if (seen !== undefined && seen.maxId > this.horizon) this.horizon = seen.maxId;
    }
    return this.horizon;
  }

  /**
   * Records the highest id visible now and returns the store generation read with it. A failed
   * poll throws and just leaves a gap in the history: the horizon does not move until one succeeds.
   */
  async poll(): Promise<GenerationReading> {
    const { rows } = await sql<{ max_id: bigint | null; generation: string; keys: string | null }>`
      SELECT (SELECT max(id) FROM pets) AS max_id, ${STORE_GENERATION_SQL} AS generation,
        (SELECT value FROM api_key_changes WHERE id = 1)::text AS keys`.execute(this.db);
    const row = rows[0];
    if (row === undefined) throw new Error('the id horizon poll returned no row');
    // Timed when the answer arrived: the snapshot it read was taken at that moment at the latest.
    const at = this.monotonicNow();
    const maxId = Number(row.max_id ?? 0);
    const fellBack = row.generation === this.base && maxId < this.highest;
    if (row.generation !== this.base || fellBack) {
      if (fellBack) this.fallsBack += 1;
      this.base = row.generation;
      this.history = [];
      this.horizon = 0;
      this.highest = 0;
    }
    this.highest = Math.max(this.highest, maxId);
    this.history.push({ at, maxId });
    if (row.keys === null) throw new Error('the api_key_changes row is missing');
    return { data: `${row.generation}:${this.fallsBack}`, keys: row.keys };
  }
}
