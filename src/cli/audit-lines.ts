import { appendFileSync } from 'node:fs';
import { type AuditLog, auditLogEntry } from '../domain/api-keys/key-audit.js';
import type { Output } from './command.js';

/** pino's number for `info`: a CLI line reads like the server's, and one parser takes both. */
const INFO = 30;

/**
 * The CLI's copy of each key audit record outside the database: one JSON line, shaped as the
 * server's `key audit` log line, appended to PETSTORE_AUDIT_LOG_FILE or, unset, written to
 * standard error. A line that cannot be written is said on standard error; the change stays made.
 */
export function cliAuditLog(file: string | undefined, stderr: Output): AuditLog {
  return {
    recorded(entry) {
      const line = `${JSON.stringify({ level: INFO, time: Date.now(), audit: auditLogEntry(entry), msg: 'key audit' })}\n`;
      if (file === undefined) {
        stderr.write(line);
        return;
      }
      try {
        appendFileSync(file, line);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        stderr.write(
          `petstore: audit line not written to ${file} (${reason}); the change is made\n`,
        );
      }
    },
  };
}

/** What a replay needs of an audit line; undefined for any other line. */
export interface AuditLine {
  id: string;
  keyId: string;
  action: string;
}

/** The audit record a log line carries (`{"audit": {...}, "msg": "key audit"}`), if it is one. */
export function parseAuditLine(line: string): AuditLine | undefined {
  const text = line.trim();
  if (!text.startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || !('audit' in parsed)) return undefined;
  const audit = parsed.audit;
  if (typeof audit !== 'object' || audit === null) return undefined;
  const { id, keyId, action } = audit as Record<string, unknown>;
  if (typeof id !== 'string' || typeof keyId !== 'string' || typeof action !== 'string') {
    return undefined;
  }
  return { id, keyId, action };
}
