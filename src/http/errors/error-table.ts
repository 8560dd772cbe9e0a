import { DEFAULT_BAN_SECONDS, DEFAULT_TIMEOUTS } from '../../config/config.js';
import { describeDuration, describeKiB } from '../../config/durations.js';
import { http } from '../server/node-http.js';
import { domainErrors } from '../../domain/errors.js';
import { getPetGone } from '../../domain/pets/deprecation.js';
import { INT64_MAX, PAGE_SIZE } from '../../domain/pets/pet.js';
import { BODY_LIMIT_BYTES, BODY_LIMIT_KIB } from '../request-limits.js';
import { problems } from '../validation/validator-compiler.js';
import { type ErrorCode, httpErrors } from './http-error.js';

interface TableEntry<C extends ErrorCode> {
  status: number;
  /**
   * When a client gets it: the README's and the docs page's error tables say the same. At most 60
   * characters, so the README's table fits 100 columns (test/docs/readme.test.ts).
   */
  when: string;
  /** What the service answers, built by the same factory the handlers call. */
  example: { readonly code: C; readonly message: string };
}

/**
 * The one table of error codes. Every error response is `{code, message, status}` with `status`
 * taken from here. Keyed by every ErrorCode: a code without an entry, an entry without a code, or
 * an example of another code does not compile.
 */
export const ERRORS: { readonly [C in ErrorCode]: TableEntry<C> } = {
  bad_request: {
    status: 400,
    when: 'Malformed HTTP, e.g. a wrong Content-Length or no Host.',
    example: httpErrors.badPath(),
  },
  invalid_json: {
    status: 400,
    when: 'The body is not valid JSON.',
    example: httpErrors.invalidJson(
      "Expected ',' or '}' after property value in JSON at position 13",
    ),
  },
  invalid_body: {
    status: 400,
    when: 'Not a NewPet: a field is missing, unknown, null or invalid.',
    example: httpErrors.invalidBody(problems.integerRange('categoryId', 1n, INT64_MAX)),
  },
  invalid_parameter: {
    status: 400,
    when: 'A query or path parameter or the Idempotency-Key is invalid.',
    example: httpErrors.invalidParameter(
      problems.integerRange('limit', BigInt(PAGE_SIZE.min), BigInt(PAGE_SIZE.max)),
    ),
  },
  unauthorized: {
    status: 401,
    when: 'No key, another scheme, a malformed, unknown or revoked key.',
    example: httpErrors.unauthorized('missing', 'pa_live_'),
  },
  api_key_expired: {
    status: 401,
    when: 'The key expired, or its old secret is past the roll grace.',
    example: httpErrors.apiKeyExpired(),
  },
  insufficient_scope: {
    status: 403,
    when: 'The key lacks the scope the operation needs (pets:write).',
    example: httpErrors.insufficientScope('pets:write'),
  },
  not_found: {
    status: 404,
    when: 'No pet with that id, or no operation at that path.',
    example: domainErrors.petNotFound(7),
  },
  key_not_found: {
    status: 404,
    when: 'Key management: no API key has that id.',
    example: domainErrors.keyNotFound('key_0123456789abcdef'),
  },
  method_not_allowed: {
    status: 405,
    when: 'The path exists, but not for that method (see Allow).',
    example: httpErrors.methodNotAllowed('DELETE', ['GET', 'HEAD']),
  },
  request_timeout: {
    status: 408,
    // The defaults: HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS change them.
    when: `The headers took over ${describeDuration(DEFAULT_TIMEOUTS.headersMs, 'short')}, or the whole request over ${describeDuration(DEFAULT_TIMEOUTS.requestMs, 'short')}.`,
    example: httpErrors.requestTimeout('headers', DEFAULT_TIMEOUTS.headersMs),
  },
  key_revoked: {
    status: 409,
    when: 'Key management: a new secret for a revoked key.',
    example: domainErrors.keyRevoked('key_0123456789abcdef'),
  },
  key_changed: {
    status: 409,
    when: 'Key management: other changes of the key kept racing it.',
    example: domainErrors.keyChanged('key_0123456789abcdef'),
  },
  idempotency_key_in_use: {
    status: 409,
    when: 'A request with the same Idempotency-Key is still running.',
    example: domainErrors.idempotencyKeyInUse(),
  },
  gone: {
    status: 410,
    when: 'getPet after its sunset, 5 December 2030.',
    example: getPetGone(),
  },
  payload_too_large: {
    status: 413,
    when: `The body is over ${describeKiB(BODY_LIMIT_BYTES)}.`,
    example: httpErrors.payloadTooLarge(BODY_LIMIT_KIB),
  },
  unsupported_media_type: {
    status: 415,
    when: 'The body is not application/json (UTF-8).',
    example: httpErrors.unsupportedMediaType(),
  },
  idempotency_key_reused: {
    status: 422,
    when: 'The Idempotency-Key was used before with a different body.',
    example: domainErrors.idempotencyKeyReused(),
  },
  rate_limited: {
    status: 429,
    when: 'Over a plan limit, or over the budget without a valid key.',
    example: httpErrors.keyRateLimited(60, 'minute', 17),
  },
  api_key_banned: {
    status: 429,
    when: 'The key kept sending after 429s and is banned for a while.',
    example: httpErrors.apiKeyBanned(DEFAULT_BAN_SECONDS),
  },
  headers_too_large: {
    status: 431,
    when: `The request line and headers are over ${describeKiB(http.maxHeaderSize)}.`,
    example: httpErrors.headersTooLarge(Math.floor(http.maxHeaderSize / 1024)),
  },
  internal_error: {
    status: 500,
    when: 'Our fault; retry later.',
    example: httpErrors.internalError(),
  },
  unavailable: {
    status: 503,
    when: 'The database or Redis does not answer; wait for Retry-After.',
    example: httpErrors.unavailable('database', 5),
  },
};

export const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[];

export function statusOf(code: ErrorCode): number {
  return ERRORS[code].status;
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
}

export function errorBody(error: { code: ErrorCode; message: string }): ErrorBody {
  return { code: error.code, message: error.message, status: ERRORS[error.code].status };
}
