import type { Kysely, Selectable } from 'kysely';
import type {
  AdminTokenRecord,
  AdminTokenStore,
  NewAdminTokenRecord,
} from '../../domain/admin-tokens/admin-token.js';
import { type AdminTokensTable, type Database, setPresentNumbers, toNumber } from './database.js';
import type { SqlWrites } from './dialect-traits.js';

function toRecord(row: Selectable<AdminTokensTable>): AdminTokenRecord {
  const record: AdminTokenRecord = {
    id: row.id,
    name: row.name,
    hash: row.hash,
    displayPrefix: row.display_prefix,
    createdAt: toNumber(row.created_at),
  };
  setPresentNumbers(record, { lastUsedAt: row.last_used_at, revokedAt: row.revoked_at });
  return record;
}

/** Reads on the backend's connection; every write goes through its SqlWrites (SQLite: the writer). */
export class SqlAdminTokenStore implements AdminTokenStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly writes: SqlWrites,
  ) {}

  async insert(record: NewAdminTokenRecord): Promise<AdminTokenRecord> {
    await this.writes.run([
      this.db
        .insertInto('admin_tokens')
        .values({
          id: record.id,
          name: record.name,
          hash: record.hash,
          display_prefix: record.displayPrefix,
          created_at: record.createdAt,
          last_used_at: null,
          revoked_at: null,
        })
        .compile(),
    ]);
    return { ...record };
  }

  async findByHash(hash: string): Promise<AdminTokenRecord | undefined> {
    const row = await this.db
      .selectFrom('admin_tokens')
      .selectAll()
      .where('hash', '=', hash)
      .executeTakeFirst();
    return row === undefined ? undefined : toRecord(row);
  }

  async list(): Promise<AdminTokenRecord[]> {
    const rows = await this.db
      .selectFrom('admin_tokens')
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  async revoke(id: string, at: number): Promise<boolean> {
    await this.writes.run([
      this.db
        .updateTable('admin_tokens')
        .set({ revoked_at: at })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .compile(),
    ]);
    const row = await this.db
      .selectFrom('admin_tokens')
      .select('id')
      .where('id', '=', id)
      .executeTakeFirst();
    return row !== undefined;
  }

  async touch(id: string, at: number): Promise<void> {
    await this.writes.run([
      this.db.updateTable('admin_tokens').set({ last_used_at: at }).where('id', '=', id).compile(),
    ]);
  }
}
