import type { Kysely } from 'kysely';
import type {
  AdminIdempotencyClaim,
  AdminIdempotencyClaimId,
  AdminIdempotencyRecord,
  AdminIdempotencyStore,
} from '../../domain/admin-tokens/admin-token.js';
import { type Database, toNumber } from './database.js';
import type { SqlWrites } from './dialect-traits.js';

/** Claims race with purges and takeovers; a claim that finds neither row nor room tries again. */
const CLAIM_ATTEMPTS = 3;

export class SqlAdminIdempotencyStore implements AdminIdempotencyStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly writes: SqlWrites,
  ) {}

  async claim(
    record: Omit<AdminIdempotencyRecord, 'response'>,
    expiredBefore: number,
  ): Promise<AdminIdempotencyClaim> {
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      // One statement: take a free key, or one whose record expired.
      const upsert = this.db
        .insertInto('admin_idempotency')
        .values({
          token_id: record.tokenId,
          key_hash: record.keyHash,
          fingerprint: record.fingerprint,
          created_at: record.createdAt,
          status: null,
          sealed: null,
        })
        .onConflict((oc) =>
          oc
            .columns(['token_id', 'key_hash'])
            .doUpdateSet({
              fingerprint: record.fingerprint,
              created_at: record.createdAt,
              status: null,
              sealed: null,
            })
            .where('admin_idempotency.created_at', '<=', expiredBefore),
        )
        .compile();
      const [changed] = await this.writes.run([upsert]);
      if (changed !== undefined && changed > 0) return { kind: 'claimed' };
      const row = await this.db
        .selectFrom('admin_idempotency')
        .selectAll()
        .where('token_id', '=', record.tokenId)
        .where('key_hash', '=', record.keyHash)
        .executeTakeFirst();
      if (row === undefined) continue; // purged in between: claim again
      const taken: AdminIdempotencyRecord = {
        tokenId: row.token_id,
        keyHash: row.key_hash,
        fingerprint: row.fingerprint,
        createdAt: toNumber(row.created_at),
      };
      if (row.sealed !== null && row.status !== null) {
        taken.response = { status: toNumber(row.status), sealed: row.sealed };
      }
      return { kind: 'taken', record: taken };
    }
    throw new Error('could not claim an Idempotency-Key: its record kept changing');
  }

  async complete(
    claim: AdminIdempotencyClaimId,
    response: { status: number; sealed: string },
  ): Promise<boolean> {
    const [changed] = await this.writes.run([
      this.db
        .updateTable('admin_idempotency')
        .set({ status: response.status, sealed: response.sealed })
        .where('token_id', '=', claim.tokenId)
        .where('key_hash', '=', claim.keyHash)
        .where('created_at', '=', claim.createdAt)
        .where('sealed', 'is', null)
        .compile(),
    ]);
    return changed !== undefined && changed > 0;
  }

  async release(claim: AdminIdempotencyClaimId): Promise<void> {
    await this.writes.run([
      this.db
        .deleteFrom('admin_idempotency')
        .where('token_id', '=', claim.tokenId)
        .where('key_hash', '=', claim.keyHash)
        .where('created_at', '=', claim.createdAt)
        .where('sealed', 'is', null)
        .compile(),
    ]);
  }

  async purgeExpired(before: number, limit: number): Promise<number> {
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new RangeError(`purgeExpired needs a limit of at least 1 (got ${limit})`);
    }
    const purge = this.db
      .deleteFrom('admin_idempotency')
      .where(({ eb, refTuple, selectFrom }) =>
        eb(
          refTuple('token_id', 'key_hash'),
          'in',
          selectFrom('admin_idempotency')
            .select(['token_id', 'key_hash'])
            .where('created_at', '<=', before)
            .orderBy('created_at')
            .limit(limit)
            .$asTuple('token_id', 'key_hash'),
        ),
      )
      .compile();
    const [deleted] = await this.writes.run([purge]);
    return deleted ?? 0;
  }
}
