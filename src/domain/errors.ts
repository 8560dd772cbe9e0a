/**
 * Refusals the domain can express. The HTTP layer owns the one table that maps each code to a
 * status (src/http/errors.ts); domain code never picks a status.
 */
export type DomainErrorCode =
  'invalid_parameter' | 'not_found' | 'gone' | 'idempotency_key_in_use' | 'idempotency_key_reused';

export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/**
 * A backend the service depends on (the database, Redis) refused the connection or did not answer
 * in time. Storage adapters throw it; the HTTP layer answers 503 with Retry-After, never 500. It is
 * an outage, not a refusal, so it carries no user-facing wording.
 */
export class DependencyUnavailableError extends Error {
  constructor(
    readonly dependency: 'database' | 'redis',
    options?: { cause?: unknown },
  ) {
    super(`${dependency} is unavailable`, options);
    this.name = 'DependencyUnavailableError';
  }
}
