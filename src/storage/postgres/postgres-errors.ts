import { DependencyUnavailableError } from '../../domain/errors.js';

/**
 * SQLSTATEs that say the server is going away, refusing connections or too slow, not that our SQL
 * is wrong: 57014 query_canceled (statement_timeout), 57P01 admin_shutdown, 57P02 crash_shutdown,
 * 57P03 cannot_connect_now (starting up, recovering), 53300 too_many_connections. Class 08
 * (connection exceptions) is matched by its prefix.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57014', '57P01', '57P02', '57P03', '53300']);

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
    if (/^08[0-9A-Z]{3}$/.test(code)) return true;
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
  return isDatabaseUnavailable(error) && !(error instanceof Error && codeOf(error) === '57014');
}
