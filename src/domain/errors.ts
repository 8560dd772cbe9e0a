/**
 * Refusals the domain can express, each built by one factory below that words what the user is
 * told. The HTTP layer owns the one table that maps each code to a status
 * (src/http/errors/error-table.ts); domain code never picks a status.
 */
export type DomainErrorCode =
  | 'invalid_parameter'
  | 'invalid_body'
  | 'not_found'
  | 'key_not_found'
  | 'key_revoked'
  | 'key_changed'
  | 'gone'
  | 'idempotency_key_in_use'
  | 'idempotency_key_reused';

export class DomainError<C extends DomainErrorCode = DomainErrorCode> extends Error {
  constructor(
    readonly code: C,
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const domainErrors = {
  petNotFound: (id: bigint | number) => new DomainError('not_found', `No pet has id ${id}`),
  invalidCursor: () =>
    new DomainError(
      'invalid_parameter',
      'cursor is not valid: use the Link rel="next" URL of the previous page as it is',
    ),
  cursorOfOtherFilter: (filter: string | undefined) =>
    new DomainError(
      'invalid_parameter',
      `cursor belongs to ${filter ? `status=${filter}` : 'the unfiltered list'}: repeat that filter or start again without cursor`,
    ),
  /** A key listing's cursor used with another filter or order than the one it was made for. */
  invalidKeyCursorShape: () =>
    new DomainError(
      'invalid_parameter',
      'cursor belongs to another filter or order: repeat those parameters or start again without cursor',
    ),
  idempotencyKeyReused: () =>
    new DomainError(
      'idempotency_key_reused',
      'This Idempotency-Key was already used with a different request body; use a new key for a new pet',
    ),
  idempotencyKeyInUse: () =>
    new DomainError(
      'idempotency_key_in_use',
      'A request with this Idempotency-Key is still being processed; retry after it finishes',
    ),
  /** The first request with the key ended without a stored answer: it may have been done. */
  idempotencyKeyUnanswered: () =>
    new DomainError(
      'idempotency_key_in_use',
      'The first request with this Idempotency-Key ended without a stored answer and may have been done (check the keys and the audit trail); it is not run again: use a new Idempotency-Key',
    ),
  keyNotFound: (id: string) =>
    new DomainError('key_not_found', `No API key has the id ${JSON.stringify(id)}`),
  /** A revoked key stays revoked: a new secret for it would be refused like the old one. */
  /** Other changes of the key kept landing between reading it and changing it. */
  keyChanged: (id: string) =>
    new DomainError(
      'key_changed',
      `The API key ${JSON.stringify(id)} was changed by other requests while this change was made, several times over; nothing was changed: read the key and try again`,
    ),
  keyRevoked: (id: string) =>
    new DomainError(
      'key_revoked',
      `The API key ${JSON.stringify(id)} is revoked: it cannot get a new secret; create a new key instead`,
    ),
  /** A key's limits or life settings out of range; `field` names what to fix. */
  invalidKeyField: (field: string, expected: string) =>
    new DomainError('invalid_body', `${field} must be ${expected}`),
  operationGone: (operation: string, removedOn: string, instead: string) =>
    new DomainError('gone', `${operation} was removed on ${removedOn}; use ${instead}`),
} as const;

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
