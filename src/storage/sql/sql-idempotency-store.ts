import type { Kysely } from 'kysely';
import type {
  IdempotencyClaim,
  IdempotencyCompletion,
  IdempotencyScope,
  IdempotencyStore,
} from '../../domain/ports.js';
import { type Database, toOptionalNumber } from './database.js';
import type { DialectTraits } from './dialect-traits.js';

export class SqlIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly traits: DialectTraits,
  ) {}

  async claim(
    scope: IdempotencyScope,
    fingerprint: string,
    options: { now: number; retentionMs: number; lockMs: number },
  ): Promise<IdempotencyClaim> {
    const { now } = options;
    // One conditional upsert: of two concurrent claims (any number of instances) only one wins.
    // An existing row is taken over only when it expired or its claimant died.
    const taken = await this.db
      .insertInto('idempotency_keys')
      .values({
        api_key_id: scope.apiKeyId,
        key: scope.key,
        fingerprint,
        pet_id: null,
        created_at: now,
        locked_at: now,
      })
      .onConflict((oc) =>
        oc
          .columns(['api_key_id', 'key'])
          .doUpdateSet({ fingerprint, pet_id: null, created_at: now, locked_at: now })
          .where((eb) =>
            eb.or([
              eb('idempotency_keys.created_at', '<=', now - options.retentionMs),
              eb.and([
                eb('idempotency_keys.pet_id', 'is', null),
                eb('idempotency_keys.locked_at', '<=', now - options.lockMs),
              ]),
            ]),
          ),
      )
      .returning('api_key_id')
      .executeTakeFirst();
    if (taken !== undefined) return { kind: 'claimed' };

    const row = await this.db
      .selectFrom('idempotency_keys')
      .select(['fingerprint', 'pet_id'])
      .where('api_key_id', '=', scope.apiKeyId)
      .where('key', '=', scope.key)
      .executeTakeFirst();
    // Released between the two statements: the key is free again.
    if (row === undefined) return this.claim(scope, fingerprint, options);
    // While the first request runs its outcome is unknown, so "in progress" wins over a body check.
    const petId = toOptionalNumber(row.pet_id);
    if (petId === undefined) return { kind: 'in_progress' };
    return row.fingerprint === fingerprint ? { kind: 'replay', petId } : { kind: 'mismatch' };
  }

  async release(claim: IdempotencyCompletion): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('api_key_id', '=', claim.apiKeyId)
      .where('key', '=', claim.key)
      .where('fingerprint', '=', claim.fingerprint)
      .where('pet_id', 'is', null)
      .execute();
  }

  async purgeExpired(before: number, limit: number): Promise<number> {
    // SQLite reads a negative LIMIT as "no limit": a caller's slip must not empty the table.
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new RangeError(`purgeExpired needs a limit of at least 1 (got ${limit})`);
    }
    const result = await this.db
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
      .executeTakeFirst();
    // Rows another purge deleted first are not counted here: each record is counted once overall.
    return Number(result.numDeletedRows);
  }
}
