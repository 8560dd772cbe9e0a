import { type Kysely, sql } from 'kysely';
import type { UsageCount } from '../../domain/api-keys/key-audit.js';
import type { KeyUsageStore } from '../../domain/ports.js';
import { type Database, toNumber } from './database.js';
import type { SqlWrites } from './dialect-traits.js';

/** One row per key and UTC day; each flush adds to it with an upsert. */
export class SqlKeyUsageStore implements KeyUsageStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly writes: SqlWrites,
  ) {}

  async add(counts: readonly UsageCount[]): Promise<void> {
    if (counts.length === 0) return;
    // One transaction for the batch, one statement per key and day (an upsert on both engines).
    await this.writes.run(
      counts.map((count) =>
        this.db
          .insertInto('key_usage')
          .values({
            key_id: count.keyId,
            day: count.day,
            admitted: count.admitted,
            refused: count.refused,
          })
          .onConflict((oc) =>
            oc.columns(['key_id', 'day']).doUpdateSet({
              admitted: sql<number>`key_usage.admitted + ${count.admitted}`,
              refused: sql<number>`key_usage.refused + ${count.refused}`,
            }),
          )
          .compile(),
      ),
    );
  }

  async days(keyId: string, fromDay: string, toDay: string): Promise<UsageCount[]> {
    const rows = await this.db
      .selectFrom('key_usage')
      .selectAll()
      .where('key_id', '=', keyId)
      .where('day', '>=', fromDay)
      .where('day', '<=', toDay)
      .orderBy('day')
      .execute();
    return rows.map((row) => ({
      keyId: row.key_id,
      day: row.day,
      admitted: toNumber(row.admitted),
      refused: toNumber(row.refused),
    }));
  }

  async purgeBefore(day: string): Promise<number> {
    const [deleted] = await this.writes.run([
      this.db.deleteFrom('key_usage').where('day', '<', day).compile(),
    ]);
    return deleted ?? 0;
  }
}
