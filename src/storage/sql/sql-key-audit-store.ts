import type { Kysely } from 'kysely';
import {
  type Actor,
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditRecord,
} from '../../domain/api-keys/key-audit.js';
import type { KeyAuditStore } from '../../domain/ports.js';
import { type Database, toNumber } from './database.js';

const ACTIONS: ReadonlySet<string> = new Set<AuditAction>(AUDIT_ACTIONS);

/**
 * Reads the audit trail. Deliberately no write method: records are appended by the key store in
 * the transaction of the change they describe, and nothing updates or deletes them.
 */
export class SqlKeyAuditStore implements KeyAuditStore {
  constructor(private readonly db: Kysely<Database>) {}

  async list(query: {
    keyId?: string;
    since?: number;
    limit: number;
    order?: 'asc' | 'desc';
  }): Promise<AuditRecord[]> {
    let select = this.db
      .selectFrom('key_audit')
      .select(['id', 'key_id', 'at', 'action', 'changes', 'actor']);
    if (query.keyId !== undefined) select = select.where('key_id', '=', query.keyId);
    if (query.since !== undefined) select = select.where('at', '>=', query.since);
    const order = query.order ?? 'asc';
    const rows = await select
      .orderBy('at', order)
      .orderBy('seq', order)
      .limit(query.limit)
      .execute();
    return rows.map((row) => {
      if (!ACTIONS.has(row.action)) throw new Error(`audit ${row.id} has an unknown action`);
      return {
        id: row.id,
        at: toNumber(row.at),
        keyId: row.key_id,
        action: row.action as AuditAction,
        changes: JSON.parse(row.changes) as AuditRecord['changes'],
        actor: JSON.parse(row.actor) as Actor,
      };
    });
  }
}
