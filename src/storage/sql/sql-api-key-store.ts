import {
  type CompiledQuery,
  type ExpressionBuilder,
  type Kysely,
  type Selectable,
  sql,
  type Updateable,
} from 'kysely';
import type { ApiKeyRecord, ApiKeyUpdate, NewApiKeyRecord } from '../../domain/api-keys/api-key.js';
import type { AuditRecord } from '../../domain/api-keys/key-audit.js';
import type { KeyListQuery } from '../../domain/api-keys/key-listing.js';
import type { ApiKeyStore } from '../../domain/ports.js';
import { isPlan } from '../../domain/rate-limits/plans.js';
import { ALL_SCOPES, formatScopes, storedScopes } from '../../domain/api-keys/scopes.js';
import {
  type ApiKeysTable,
  type Database,
  setPresentNumbers,
  toNumber,
  toOptionalNumber,
} from './database.js';
import type { DialectTraits, SqlWrites } from './dialect-traits.js';

function toRecord(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  if (!isPlan(row.plan)) throw new Error(`api key ${row.id} has an unknown plan ${row.plan}`);
  const record: ApiKeyRecord = {
    id: row.id,
    label: row.label,
    plan: row.plan,
    scopes: storedScopes(row.scopes),
    hash: row.hash,
    displayPrefix: row.display_prefix,
    createdAt: toNumber(row.created_at),
    deprecatedCalls: toNumber(row.deprecated_calls),
  };
  const perMinute = toOptionalNumber(row.per_minute);
  const perDay = toOptionalNumber(row.per_day);
  if (perMinute !== undefined && perDay !== undefined) record.customLimits = { perMinute, perDay };
  setPresentNumbers(record, {
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    bannedUntil: row.banned_until,
    banLiftedAt: row.ban_lifted_at,
    liftedBanUntil: row.lifted_ban_until,
    expiresAt: row.expires_at,
  });
  if (row.previous_hash !== null) record.previousHash = row.previous_hash;
  setPresentNumbers(record, { previousHashExpiresAt: row.previous_hash_expires_at });
  return record;
}

/** The statement of SqlApiKeyStore.page, open to tests that read its query plan. */
export function keyPageQuery(db: Kysely<Database>, query: KeyListQuery) {
  // The sort expressions are the indexed ones (migration 2026-12-02-13-key-listing), spelled
  // the same here so both engines walk the index instead of sorting every key.
  const column = {
    created: sql<number>`created_at`,
    label: sql<string>`label`,
    lastUsed: sql<number>`coalesce(last_used_at, 0)`,
  }[query.sort];
  const { now, order } = query;
  let select = db.selectFrom('api_keys').selectAll();
  if (query.plan !== undefined) select = select.where('plan', '=', query.plan);
  if (query.label !== undefined && query.label !== '') {
    const escaped = query.label.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
    select = select.where(sql<boolean>`lower(label) like ${`%${escaped}%`} escape '\\'`);
  }
  const live = sql<boolean>`revoked_at is null and (expires_at is null or expires_at > ${now})`;
  switch (query.state) {
    case 'revoked':
      select = select.where('revoked_at', 'is not', null);
      break;
    case 'expired':
      select = select.where(
        sql<boolean>`revoked_at is null and expires_at is not null and expires_at <= ${now}`,
      );
      break;
    case 'banned':
      select = select.where(sql<boolean>`${live} and banned_until > ${now}`);
      break;
    case 'active':
      select = select.where(
        sql<boolean>`${live} and (banned_until is null or banned_until <= ${now})`,
      );
      break;
    case undefined:
      break;
  }
  if (query.after !== undefined) {
    const { value, id } = query.after;
    const at = typeof value === 'number' ? sql`cast(${value} as bigint)` : sql`${value}`;
    select = select.where(
      order === 'asc'
        ? sql<boolean>`(${column}, id) > (${at}, ${id})`
        : sql<boolean>`(${column}, id) < (${at}, ${id})`,
    );
  }
  return select.orderBy(column, order).orderBy('id', order).limit(query.limit);
}

type KeyCondition = (
  eb: ExpressionBuilder<Database, 'api_keys'>,
) => ReturnType<ExpressionBuilder<Database, 'api_keys'>['and']>;

/** The key still holds every field a change may be decided from, as `read` saw them. */
function unchangedSince(read: ApiKeyRecord): KeyCondition {
  return (eb) => {
    type Nullable =
      | 'per_minute'
      | 'per_day'
      | 'expires_at'
      | 'revoked_at'
      | 'previous_hash'
      | 'previous_hash_expires_at';
    const same = (column: Nullable, value: string | number | undefined) =>
      value === undefined ? eb(column, 'is', null) : eb(column, '=', value as never);
    return eb.and([
      eb('hash', '=', read.hash),
      eb('plan', '=', read.plan),
      eb('scopes', '=', formatScopes(read.scopes)),
      same('per_minute', read.customLimits?.perMinute),
      same('per_day', read.customLimits?.perDay),
      same('expires_at', read.expiresAt),
      same('revoked_at', read.revokedAt),
      same('previous_hash', read.previousHash),
      same('previous_hash_expires_at', read.previousHashExpiresAt),
    ]);
  };
}

/** Reads on the backend's connection; every write goes through its SqlWrites. */
export class SqlApiKeyStore implements ApiKeyStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly writes: SqlWrites,
    private readonly traits: DialectTraits,
  ) {}

  /**
   * The audit record's INSERT, as a SELECT that yields its row only while `condition` holds for
   * the key, so that the record is appended exactly when the change it describes takes effect.
   */
  private appendAudit(
    audit: AuditRecord,
    condition: KeyCondition = (eb) => eb.and([]),
    once = false,
  ): CompiledQuery {
    const db = this.db;
    const insert = db
      .insertInto('key_audit')
      .columns(['id', 'key_id', 'at', 'action', 'changes', 'actor'])
      .expression(
        db
          .selectNoFrom((eb) => [
            eb.val(audit.id).as('id'),
            eb.val(audit.keyId).as('key_id'),
            eb.cast(eb.val(audit.at), 'bigint').as('at'),
            eb.val(audit.action).as('action'),
            eb.val(JSON.stringify(audit.changes)).as('changes'),
            eb.val(JSON.stringify(audit.actor)).as('actor'),
          ])
          .where(({ exists, selectFrom }) =>
            exists(
              selectFrom('api_keys')
                .select(sql.lit(1).as('one'))
                .where('id', '=', audit.keyId)
                .where(condition),
            ),
          ),
      );
    return (once ? insert.onConflict((oc) => oc.column('id').doNothing()) : insert).compile();
  }

  private auditStatements(audit: AuditRecord | undefined): CompiledQuery[] {
    return audit === undefined ? [] : [this.appendAudit(audit)];
  }

  async insert(record: NewApiKeyRecord, audit?: AuditRecord): Promise<ApiKeyRecord> {
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
        // Named only when set, so the statement also fits a schema from before expiry existed.
        ...(record.expiresAt !== undefined ? { expires_at: record.expiresAt } : {}),
        // Likewise from before scopes: the column's default is every scope.
        ...(record.scopes.length < ALL_SCOPES.length
          ? { scopes: formatScopes(record.scopes) }
          : {}),
      })
      .compile();
    await this.writes.run([insert, ...this.auditStatements(audit)]);
    return { ...record, deprecatedCalls: 0 };
  }

  async insertIfNone(record: NewApiKeyRecord, audit?: AuditRecord): Promise<boolean> {
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
        'scopes',
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
            eb.val(formatScopes(record.scopes)).as('scopes'),
          ])
          .where(({ not, exists, selectFrom }) =>
            not(exists(selectFrom('api_keys').select(sql.lit(1).as('one')))),
          ),
      )
      .compile();
    const changes = await this.writes.run([
      ...this.traits.firstKeyLock,
      insert,
      // Found only when this insert made the key: another instance's key has another id.
      ...this.auditStatements(audit),
    ]);
    return changes.at(audit === undefined ? -1 : -2) === 1;
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    // Two lookups by unique indexes: the current secret first, as nearly every request sends it.
    return (await this.findOne('hash', hash)) ?? (await this.findOne('previous_hash', hash));
  }

  findById(id: string): Promise<ApiKeyRecord | undefined> {
    return this.findOne('id', id);
  }

  private async findOne(
    column: 'hash' | 'id' | 'previous_hash',
    value: string,
  ): Promise<ApiKeyRecord | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where(column, '=', value)
      .executeTakeFirst();
    return row === undefined ? undefined : toRecord(row);
  }

  async page(query: KeyListQuery): Promise<ApiKeyRecord[]> {
    return (await keyPageQuery(this.db, query).execute()).map(toRecord);
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

  async update(
    id: string,
    update: ApiKeyUpdate,
    audit: AuditRecord,
    read?: ApiKeyRecord,
  ): Promise<boolean> {
    const set: Updateable<ApiKeysTable> = {};
    if (update.plan !== undefined) set.plan = update.plan;
    if (update.customLimits !== undefined) {
      set.per_minute = update.customLimits?.perMinute ?? null;
      set.per_day = update.customLimits?.perDay ?? null;
    }
    if (update.expiresAt !== undefined) set.expires_at = update.expiresAt;
    if (update.scopes !== undefined) set.scopes = formatScopes(update.scopes);
    if (update.secret !== undefined) {
      set.hash = update.secret.hash;
      set.display_prefix = update.secret.displayPrefix;
      set.previous_hash = update.secret.previousHash;
      set.previous_hash_expires_at = update.secret.previousHashExpiresAt;
    }
    let statement = this.db.updateTable('api_keys').set(set);
    if (update.secret !== undefined) {
      // Renumbered, so every instance's known-hash loads (by seq) meet the new secret's hash.
      statement = statement.set(sql.raw('seq') as never, sql.raw(this.traits.nextKeySeq) as never);
    }
    if (read === undefined) {
      const [changed] = await this.writes.run([
        statement.where('id', '=', id).compile(),
        this.appendAudit(audit),
      ]);
      return changed !== undefined && changed > 0;
    }
    const guard = unchangedSince(read);
    const [, , changed] = await this.writes.run([
      // Takes the row's lock first when it still holds what was read (PostgreSQL): a change racing
      // this one waits here, then finds the row changed, and appends no audit record of its own.
      this.db
        .updateTable('api_keys')
        .set((eb) => ({ id: eb.ref('id') }))
        .where('id', '=', id)
        .where(guard)
        .compile(),
      this.appendAudit(audit, guard),
      statement.where('id', '=', id).where(guard).compile(),
    ]);
    return changed !== undefined && changed > 0;
  }

  async revoke(id: string, at: number, audit?: AuditRecord): Promise<boolean> {
    await this.writes.run([
      // Before the update, while the key is still unrevoked: only the revocation that counts.
      ...(audit ? [this.appendAudit(audit, (eb) => eb.and([eb('revoked_at', 'is', null)]))] : []),
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

  async setBannedUntil(id: string, until: number, audit?: AuditRecord): Promise<boolean> {
    return this.updated(
      this.db.updateTable('api_keys').set({ banned_until: until }).where('id', '=', id).compile(),
      audit,
    );
  }

  async liftBan(
    id: string,
    callerNow: number,
    audit?: Omit<AuditRecord, 'at'>,
  ): Promise<number | undefined> {
    // Read before the update rather than inside it, so that the audit record and the answer carry
    // the very time written; a ban starting in the moment between is later than the lift, and stays.
    const at = (await this.databaseNow()) ?? callerNow;
    const lifted = await this.updated(
      this.db
        .updateTable('api_keys')
        .set((eb) => ({
          banned_until: null,
          ban_lifted_at: at,
          // The ban this lifts, named by its end on the store's clock; a second unban keeps it.
          lifted_ban_until: eb.fn
            .coalesce('banned_until', 'lifted_ban_until')
            .$castTo<number | null>(),
        }))
        .where('id', '=', id)
        .compile(),
      audit === undefined ? undefined : { ...audit, at },
    );
    return lifted ? at : undefined;
  }

  /** The database's clock where the dialect has one servers share (DialectTraits.databaseNow). */
  private async databaseNow(): Promise<number | undefined> {
    if (this.traits.databaseNow === null) return undefined;
    const { rows } = await this.db.executeQuery(this.traits.databaseNow);
    const [row] = rows;
    if (row === undefined) throw new Error('the database did not tell its time');
    return toNumber(row.now);
  }

  async endedBans(now: number, limit: number): Promise<Array<{ id: string; bannedUntil: number }>> {
    const rows = await this.db
      .selectFrom('api_keys')
      .select(['id', 'banned_until'])
      .where('banned_until', 'is not', null)
      .where('banned_until', '<=', now)
      .orderBy('banned_until')
      .limit(limit)
      .execute();
    return rows.flatMap((row) =>
      row.banned_until === null ? [] : [{ id: row.id, bannedUntil: toNumber(row.banned_until) }],
    );
  }

  async clearEndedBan(id: string, bannedUntil: number, audit: AuditRecord): Promise<void> {
    await this.writes.run([
      this.appendAudit(audit, (eb) => eb.and([eb('banned_until', '=', bannedUntil)]), true),
      this.db
        .updateTable('api_keys')
        .set({ banned_until: null })
        .where('id', '=', id)
        .where('banned_until', '=', bannedUntil)
        .compile(),
    ]);
  }

  /** Whether the update found its key; the audit record goes in the same transaction. */
  private async updated(update: CompiledQuery, audit?: AuditRecord): Promise<boolean> {
    const [changed] = await this.writes.run([update, ...this.auditStatements(audit)]);
    return changed !== undefined && changed > 0;
  }
}
