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
