import { type CompiledQuery, type Kysely, type Selectable, sql } from 'kysely';
import type { ApiKeyRecord, NewApiKeyRecord } from '../../domain/api-keys/api-key.js';
import type { ApiKeyStore } from '../../domain/ports.js';
import { isPlan } from '../../domain/rate-limits/plans.js';
import { type ApiKeysTable, type Database, toNumber, toOptionalNumber } from './database.js';
import type { DialectTraits, SqlWrites } from './dialect-traits.js';

function toRecord(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  if (!isPlan(row.plan)) throw new Error(`api key ${row.id} has an unknown plan ${row.plan}`);
  const record: ApiKeyRecord = {
    id: row.id,
    label: row.label,
    plan: row.plan,
    hash: row.hash,
    displayPrefix: row.display_prefix,
    createdAt: toNumber(row.created_at),
    deprecatedCalls: toNumber(row.deprecated_calls),
  };
  const perMinute = toOptionalNumber(row.per_minute);
  const perDay = toOptionalNumber(row.per_day);
  if (perMinute !== undefined && perDay !== undefined) record.customLimits = { perMinute, perDay };
  const lastUsedAt = toOptionalNumber(row.last_used_at);
  if (lastUsedAt !== undefined) record.lastUsedAt = lastUsedAt;
  const revokedAt = toOptionalNumber(row.revoked_at);
  if (revokedAt !== undefined) record.revokedAt = revokedAt;
  const bannedUntil = toOptionalNumber(row.banned_until);
  if (bannedUntil !== undefined) record.bannedUntil = bannedUntil;
  const banLiftedAt = toOptionalNumber(row.ban_lifted_at);
  if (banLiftedAt !== undefined) record.banLiftedAt = banLiftedAt;
  return record;
}

/** Reads on the backend's connection; every write goes through its SqlWrites. */
export class SqlApiKeyStore implements ApiKeyStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly writes: SqlWrites,
    private readonly traits: DialectTraits,
  ) {}

  async insert(record: NewApiKeyRecord): Promise<ApiKeyRecord> {
    const insert = this.db
      .insertInto('api_keys')
      .values({
        id: record.id,
        label: record.label,
        plan: record.plan,
        per_minute: record.customLimits?.perMinute ?? null,
        per_day: record.customLimits?.perDay ?? null,
        hash: record.hash,
        display_prefix: record.displayPrefix,
        created_at: record.createdAt,
        last_used_at: null,
        revoked_at: null,
        banned_until: null,
        ban_lifted_at: null,
      })
      .compile();
    await this.writes.run([insert]);
    return { ...record, deprecatedCalls: 0 };
  }

  async insertIfNone(record: NewApiKeyRecord): Promise<boolean> {
    const db = this.db;
    // One statement: the existence check and the insert see the same table. The casts give
    // PostgreSQL the column types that a bare parameter in a SELECT list would not have.
    const insert = db
      .insertInto('api_keys')
      .columns([
        'id',
        'label',
        'plan',
        'per_minute',
        'per_day',
        'hash',
        'display_prefix',
        'created_at',
      ])
      .expression(
        db
          .selectNoFrom((eb) => [
            eb.val(record.id).as('id'),
            eb.val(record.label).as('label'),
            eb.val(record.plan).as('plan'),
            eb.cast(eb.val(record.customLimits?.perMinute ?? null), 'bigint').as('per_minute'),
            eb.cast(eb.val(record.customLimits?.perDay ?? null), 'bigint').as('per_day'),
            eb.val(record.hash).as('hash'),
            eb.val(record.displayPrefix).as('display_prefix'),
            eb.cast(eb.val(record.createdAt), 'bigint').as('created_at'),
          ])
          .where(({ not, exists, selectFrom }) =>
            not(exists(selectFrom('api_keys').select(sql.lit(1).as('one')))),
          ),
      )
      .compile();
    const changes = await this.writes.run([...this.traits.firstKeyLock, insert]);
    return changes.at(-1) === 1;
  }

  findByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    return this.findOne('hash', hash);
  }

  findById(id: string): Promise<ApiKeyRecord | undefined> {
    return this.findOne('id', id);
  }

  private async findOne(column: 'hash' | 'id', value: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where(column, '=', value)
      .executeTakeFirst();
    return row === undefined ? undefined : toRecord(row);
  }

  async list(): Promise<ApiKeyRecord[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  async hashesAfter(seq: number): Promise<Array<{ hash: string; seq: number }>> {
    const rows = await this.db
      .selectFrom('api_keys')
      .select(['hash', 'seq'])
      .where('seq', '>', seq)
      .orderBy('seq')
      .execute();
    return rows.map((row) => ({ hash: row.hash, seq: toNumber(row.seq) }));
  }

  async count(): Promise<number> {
    const { n } = await this.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return Number(n);
  }

  async revoke(id: string, at: number): Promise<boolean> {
    await this.writes.run([
      this.db
        .updateTable('api_keys')
        .set({ revoked_at: at })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .compile(),
    ]);
    return (await this.findById(id)) !== undefined;
  }

  async touch(id: string, at: number): Promise<void> {
    await this.writes.run([
      this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).compile(),
    ]);
  }

  async addDeprecatedCalls(counts: ReadonlyArray<{ id: string; calls: number }>): Promise<void> {
    if (counts.length === 0) return;
    // One transaction for the batch: one commit (one fsync on SQLite) however many keys it holds.
    await this.writes.run(
      counts.map(({ id, calls }) =>
        this.db
          .updateTable('api_keys')
          .set({ deprecated_calls: sql<number>`deprecated_calls + ${calls}` })
          .where('id', '=', id)
          .compile(),
      ),
    );
  }

  async setBannedUntil(id: string, until: number): Promise<boolean> {
    return this.updated(
      this.db.updateTable('api_keys').set({ banned_until: until }).where('id', '=', id).compile(),
    );
  }

  async liftBan(id: string, at: number): Promise<boolean> {
    return this.updated(
      this.db
        .updateTable('api_keys')
        .set({ banned_until: null, ban_lifted_at: at })
        .where('id', '=', id)
        .compile(),
    );
  }

  /** Whether the update found its key. */
  private async updated(update: CompiledQuery): Promise<boolean> {
    const [changed] = await this.writes.run([update]);
    return changed !== undefined && changed > 0;
  }
}
