import type { ErrorCode } from './types.js';

/** An error answer of the API, typed by its `code`. */
export class PetApiError<C extends ErrorCode = ErrorCode> extends Error {
  override name = 'PetApiError';
  constructor(
    readonly code: C,
    message: string,
    readonly status: number,
    /** Seconds the server asked to wait (`Retry-After`), on 429s. */
    readonly retryAfterSeconds: number | undefined,
    /** Quote it when asking the operator about a failure. */
    readonly requestId: string | undefined,
  ) {
    super(message);
  }
}

/**
 * The key is banned for hammering after 429s. The client never retries this: every further
 * request before `retryAfterSeconds` would be refused too.
 */
export class ApiKeyBannedError extends PetApiError<'api_key_banned'> {
  override name = 'ApiKeyBannedError';
}

/**
 * The key is valid but lacks the scope the operation needs (403, RFC 6750): `scope` names it, as
 * the `WWW-Authenticate` challenge did. Never retried: the key has to change, not the timing.
 */
export class InsufficientScopeError extends PetApiError<'insufficient_scope'> {
  override name = 'InsufficientScopeError';
  constructor(
    code: 'insufficient_scope',
    message: string,
    status: number,
    requestId: string | undefined,
    /** `pets:read` or `pets:write`; undefined when a proxy dropped the challenge. */
    readonly scope: string | undefined,
  ) {
    super(code, message, status, undefined, requestId);
  }
}

/** Something other than an API answer went wrong. */
export class PetClientError extends Error {
  override name = 'PetClientError';
  constructor(
    readonly kind: 'network' | 'unsafe_integer' | 'invalid_response',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
