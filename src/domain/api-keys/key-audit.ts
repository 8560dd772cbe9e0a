import { randomBase62 } from './key-format.js';

/** Who made a change to a key, as the audit trail records it. */
export type Actor =
  /** `os.userInfo().username` and `os.hostname()` of the CLI process. */
  | { kind: 'cli'; user: string; host: string }
  | { kind: 'admin_token'; id: string }
  /** The service itself: an automatic ban and its end. */
  | { kind: 'system' };

export const SYSTEM_ACTOR: Actor = Object.freeze({ kind: 'system' });

/** Every kind of key change the audit trail records, named once (storage and the admin API read it). */
export const AUDIT_ACTIONS = [
  'create',
  'set_plan',
  'set_scopes',
  'set_expiry',
  'roll',
  'revoke',
  'unban',
  'ban',
  'ban_end',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Old and new value of each field a change touched; never a secret or a hash. */
export type AuditChanges = Record<string, { from: unknown; to: unknown }>;

/** One change to a key as storage keeps it (times in epoch ms). Appended, never changed. */
export interface AuditRecord {
  id: string;
  at: number;
  keyId: string;
  action: AuditAction;
  changes: AuditChanges;
  actor: Actor;
}

export function newAuditId(): string {
  return 'aud_' + randomBase62(16);
}

/** Per key and UTC day: what admission decided for requests that named the key. */
export interface UsageCount {
  keyId: string;
  /** YYYY-MM-DD, UTC. */
  day: string;
  admitted: number;
  refused: number;
}

export function utcDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/**
 * Where each committed audit record is also written, outside the database (a log line), so that a
 * restore from backup does not erase the record of what was done since (`keys replay-revocations`).
 */
export interface AuditLog {
  recorded(entry: AuditRecord): void;
}

/**
 * Writes the copy of a committed record to `log`, if any. The copy must never fail the change it
 * records: the database already keeps the record.
 */
export function copyToAuditLog(log: AuditLog | undefined, entry: AuditRecord): void {
  try {
    log?.recorded(entry);
  } catch {
    // The database keeps the record; the line is only the copy.
  }
}

/** The audit record as a log line carries it: the same fields `keys audit --json` prints. */
export function auditLogEntry(entry: AuditRecord): {
  id: string;
  at: string;
  keyId: string;
  action: AuditAction;
  changes: AuditChanges;
  actor: Actor;
} {
  return {
    id: entry.id,
    at: new Date(entry.at).toISOString(),
    keyId: entry.keyId,
    action: entry.action,
    changes: entry.changes,
    actor: entry.actor,
  };
}
