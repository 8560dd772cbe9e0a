import type { Kysely } from 'kysely';
import type { IdempotencyStore } from '../../domain/ports.js';
import type { Database } from './database.js';
import type { DialectTraits, SqlWrites } from './dialect-traits.js';

export class SqlIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly writes: SqlWrites,
    private readonly traits: DialectTraits,
  ) {}

  async purgeExpired(before: number, limit: number): Promise<number> {
    // SQLite reads a negative LIMIT as "no limit": a caller's slip must not empty the table.
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new RangeError(`purgeExpired needs a limit of at least 1 (got ${limit})`);
    }
    const purge = this.db
      .deleteFrom('idempotency_keys')
      .where(({ eb, refTuple, selectFrom }) =>
        eb(
          refTuple('api_key_id', 'key'),
          'in',
          selectFrom('idempotency_keys')
            .select(['api_key_id', 'key'])
            .where('created_at', '<=', before)
            .orderBy('created_at')
            .limit(limit)
            .$if(this.traits.skipLocked, (batch) => batch.forUpdate().skipLocked())
            .$asTuple('api_key_id', 'key'),
        ),
      )
      .compile();
    // Rows another purge deleted first are not counted here: each record is counted once overall.
    const [deleted] = await this.writes.run([purge]);
    return deleted ?? 0;
  }
}
