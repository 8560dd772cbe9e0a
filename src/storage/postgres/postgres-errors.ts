import { DependencyUnavailableError } from '../../domain/errors.js';

/**
 * SQLSTATEs that say the server is going away, refusing connections, too slow or unable to take
 * writes now, not that our SQL is wrong: 57014 query_canceled (statement_timeout), 57P01
 * admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up, recovering), 25006
 * read_only_sql_transaction (a standby, a database set read-only: right after a failover). Class
 * 08 (connection exceptions) and class 53 (insufficient resources: 53100 disk_full, 53200
 * out_of_memory, 53300 too_many_connections, 53400 configuration_limit_exceeded) are matched by
 * their prefix.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57014', '57P01', '57P02', '57P03', '25006']);
const UNAVAILABLE_CLASSES = /^(08|53)[0-9A-Z]{3}$/;

/**
 * Outages after which the session itself is sound and worth keeping: a cancelled statement, a
 * disk or memory that ran out on the server. A read-only session (25006) is not among them: its
 * setting was fixed when it connected, so only a new connection can reach a server (or a
 * database setting) that takes writes again.
 */
const SESSION_KEPT_SQLSTATES = new Set(['57014', '53100', '53200', '53400']);

/**
 * Socket errors on the way to the server. ENOTFOUND is here too: once the service runs, a name that
 * stops resolving is a DNS or orchestration outage far more often than a typo, which the first
 * start would have shown anyway.
 */
const UNAVAILABLE_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

/**
 * node-postgres and pg-pool raise these as plain Errors without a code: the socket closed under a
 * query, the connect timeout ("Connection terminated due to connection timeout"), no pooled
 * connection freed up within the connect timeout, the client-side deadline, and a client that a
 * connection error left unusable.
 */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated\b/,
  /^timeout exceeded when trying to connect$/,
  /^Query read timeout$/,
  /^Client has encountered a connection error and is not queryable$/,
];

function codeOf(error: Error): string | undefined {
  const code: unknown = Reflect.get(error, 'code');
  return typeof code === 'string' ? code : undefined;
}

/** Whether `error` means PostgreSQL is unreachable or too slow, rather than a bug in a query. */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof DependencyUnavailableError) return true;
  if (!(error instanceof Error)) return false;
  const code = codeOf(error);
  if (code !== undefined) {
    if (UNAVAILABLE_CLASSES.test(code)) return true;
    if (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_NETWORK_CODES.has(code)) return true;
  }
  // A host name with several addresses (localhost: ::1 and 127.0.0.1) fails with one error per address.
  if (error instanceof AggregateError) return error.errors.some(isDatabaseUnavailable);
  return UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(error.message));
}

/** The error a store rejects with: an outage becomes DependencyUnavailableError, a bug stays as it is. */
export function toStorageError(error: unknown): unknown {
  if (error instanceof DependencyUnavailableError || !isDatabaseUnavailable(error)) return error;
  return new DependencyUnavailableError('database', { cause: error });
}

/**
 * Whether the connection that raised `error` must not serve another query. Only a cancelled
 * statement (57014) leaves a healthy session behind; after any other outage the socket is dead
 * or about to be (a FATAL error arrives before the server closes it), and the client-side
 * deadline leaves a query running or lost on it.
 */
export function breaksConnection(error: unknown): boolean {
  if (!isDatabaseUnavailable(error)) return false;
  const code = error instanceof Error ? codeOf(error) : undefined;
  return code === undefined || !SESSION_KEPT_SQLSTATES.has(code);
}

/** How long a write refused for lack of resources keeps readiness saying not ready. */
export const WRITE_FAILURE_MEMORY_MS = 5_000;

/**
 * What refused writes teach about the pool. The last write the server refused for lack of
 * resources (class 53: a full disk), which no cheap read can detect: readiness says not ready for
 * WRITE_FAILURE_MEMORY_MS after it, then lets traffic try again (a request that fails again
 * renews it). And when a session last answered that it takes no writes (25006).
 */
export class WriteFailures {
  private last: { at: number; error: Error } | undefined;
  private readOnlyAt = -Infinity;

  constructor(readonly now: () => number = () => performance.now()) {}

  note(error: unknown): void {
    if (!(error instanceof Error)) return;
    const code = codeOf(error) ?? '';
    if (/^53[0-9A-Z]{3}$/.test(code)) this.last = { at: this.now(), error };
    if (code === '25006') this.readOnlyAt = this.now();
  }

  throwIfRecent(): void {
    if (this.last !== undefined && this.now() - this.last.at < WRITE_FAILURE_MEMORY_MS) {
      throw new DependencyUnavailableError('database', { cause: this.last.error });
    }
  }

  /**
   * A session's read-only setting is fixed when it connects (a standby's, a role's or database's
   * default_transaction_read_only), so once one session answered 25006, any opened before it may
   * be read-only too, also after the database takes writes again: such a session is closed rather
   * than used, where each would otherwise fail one more request after readiness said ready.
   */
  mayBeReadOnly(openedAt: number): boolean {
    return openedAt < this.readOnlyAt;
  }
}
