import type { DomainErrorCode } from '../../domain/errors.js';
import { describeDuration } from '../../config/durations.js';

/** Codes of refusals decided in the HTTP layer; with the domain's, every code the API answers. */
export type HttpErrorCode =
  | 'bad_request'
  | 'invalid_json'
  | 'invalid_body'
  | 'unauthorized'
  | 'api_key_expired'
  | 'insufficient_scope'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'headers_too_large'
  | 'rate_limited'
  | 'api_key_banned'
  | 'internal_error'
  | 'unavailable';

export type ErrorCode = DomainErrorCode | HttpErrorCode;

/** A refusal decided in the HTTP layer (bad header, bad JSON, ...), with headers it must carry. */
export class HttpError<C extends ErrorCode = ErrorCode> extends Error {
  constructor(
    readonly code: C,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

const REALM = 'Bearer realm="pets"';
const ADMIN_REALM = 'Bearer realm="petstore-admin"';

export type KeyRefusal = 'missing' | 'malformed' | 'unknown' | 'revoked';

/**
 * One factory per refusal: the only place its words are written. Handlers throw what these build,
 * and the OpenAPI examples (src/http/errors/error-table.ts) are built by calling them.
 */
export const httpErrors = {
  badPath: () => new HttpError('bad_request', 'The request path is not valid percent-encoding'),
  badContentLength: () =>
    new HttpError('bad_request', 'Content-Length does not match the body sent'),
  badRequest: () => new HttpError('bad_request', 'The request could not be understood'),
  /** `reason` is the HTTP parser's own words (e.g. "Invalid header value char"), never the input. */
  badFraming: (reason: string) =>
    new HttpError('bad_request', `The request is not valid HTTP/1.1: ${reason}`),
  duplicateAuthorization: () =>
    new HttpError(
      'bad_request',
      'The request carries more than one Authorization header; send exactly one: Authorization: Bearer <key>',
    ),
  tunnelRefused: () =>
    new HttpError(
      'bad_request',
      'CONNECT asks for a tunnel, which this service does not open; send the request itself',
    ),
  missingHost: () =>
    new HttpError('bad_request', 'An HTTP/1.1 request must carry a Host header (RFC 9112)'),
  requestTimeout: (part: 'headers' | 'request', limitMs: number) =>
    new HttpError(
      'request_timeout',
      part === 'headers'
        ? `The request headers did not arrive within ${describeDuration(limitMs)}`
        : `The whole request did not arrive within ${describeDuration(limitMs)}`,
    ),
  headersTooLarge: (limitKiB: number) =>
    new HttpError(
      'headers_too_large',
      `The request line and headers are larger than ${limitKiB} KiB; send a shorter path or fewer headers`,
    ),
  invalidJson: (detail: string) =>
    new HttpError('invalid_json', `Request body is not valid JSON: ${detail}`),
  emptyJson: () => new HttpError('invalid_json', 'Request body is empty; send a JSON object'),
  /** `problem` names the field and what was expected (see src/http/validation/validator-compiler.ts). */
  invalidBody: (problem: string) => new HttpError('invalid_body', problem),
  invalidParameter: (problem: string) => new HttpError('invalid_parameter', problem),
  /** `authorization`, the header as sent, only picks the message of a malformed key; never shown. */
  unauthorized: (refusal: KeyRefusal, keyPrefix: string, authorization?: string) =>
    new HttpError(
      'unauthorized',
      {
        missing: 'Missing API key: send it as Authorization: Bearer <key>',
        malformed: malformedKeyMessage(keyPrefix, authorization),
        unknown: 'API key is not valid: check it was copied whole, or create a new one',
        revoked: 'API key has been revoked: create a new one',
      }[refusal],
      // RFC 6750: error="invalid_token" only when a token was sent.
      { 'www-authenticate': refusal === 'missing' ? REALM : `${REALM}, error="invalid_token"` },
    ),
  /** The admin listener's 401: an admin token is a credential of its own kind. */
  adminUnauthorized: (refusal: KeyRefusal) =>
    new HttpError(
      'unauthorized',
      {
        missing: 'Missing admin token: send it as Authorization: Bearer pa_admin_...',
        malformed:
          'Admin token is not valid: expected Authorization: Bearer pa_admin_ followed by 36 letters and digits (an API key does not open the admin API)',
        unknown: 'Admin token is not valid: check it was copied whole, or create a new one',
        revoked: 'Admin token has been revoked: create a new one with petstore admin-tokens create',
      }[refusal],
      {
        'www-authenticate':
          refusal === 'missing' ? ADMIN_REALM : `${ADMIN_REALM}, error="invalid_token"`,
      },
    ),
  /** A key past its expiry, or a rolled key's old secret past its grace end. */
  apiKeyExpired: () =>
    new HttpError(
      'api_key_expired',
      'API key has expired (or was replaced by a new secret whose grace period ended): use the current secret or ask for a new key',
      { 'www-authenticate': `${REALM}, error="invalid_token"` },
    ),
  /** RFC 6750 3.1: a valid key without the scope the operation needs, named in the header. */
  insufficientScope: (scope: string) =>
    new HttpError(
      'insufficient_scope',
      `API key lacks the ${scope} scope this operation needs: use a key that has it, or add it with petstore keys set-scopes`,
      { 'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"` },
    ),
  /** `inApi`: the path is under the API's prefix, where what is missing is an operation. */
  noRoute: (method: string, path: string, inApi: boolean) =>
    new HttpError('not_found', `${inApi ? 'No operation' : 'Nothing'} at ${method} ${path}`),
  methodNotAllowed: (method: string, allowed: readonly string[]) =>
    new HttpError(
      'method_not_allowed',
      `${method} is not allowed here; use ${allowed.join(', ')}`,
      { allow: allowed.join(', ') },
    ),
  payloadTooLarge: (limitKiB: number) =>
    new HttpError('payload_too_large', `Request body is larger than ${limitKiB} KiB`),
  unsupportedMediaType: () =>
    new HttpError(
      'unsupported_media_type',
      'Send the request body as Content-Type: application/json',
    ),
  unsupportedContentEncoding: (encoding: string) =>
    new HttpError(
      'unsupported_media_type',
      `Content-Encoding ${encoding} is not accepted; send the JSON body unencoded (identity)`,
    ),
  unsupportedCharset: () =>
    new HttpError(
      'unsupported_media_type',
      'Send the request body as UTF-8: Content-Type: application/json, with no charset or charset=utf-8',
    ),
  keyRateLimited: (limit: number, window: string, retryAfterSeconds: number) =>
    new HttpError(
      'rate_limited',
      `Rate limit of ${limit} requests per ${window} reached for this API key; retry after ${retryAfterSeconds} seconds (Retry-After)`,
      { 'retry-after': String(retryAfterSeconds) },
    ),
  addressRateLimited: (limit: number, window: string, retryAfterSeconds: number) =>
    new HttpError(
      'rate_limited',
      `Too many requests without a valid API key from this address (${limit} per ${window}); retry after ${retryAfterSeconds} seconds`,
      { 'retry-after': String(retryAfterSeconds) },
    ),
  apiKeyBanned: (retryAfterSeconds: number) =>
    new HttpError(
      'api_key_banned',
      `This API key is banned for ${retryAfterSeconds} more seconds for sending requests after 429 responses; wait for Retry-After, then back off exponentially`,
      { 'retry-after': String(retryAfterSeconds) },
    ),
  internalError: () =>
    new HttpError(
      'internal_error',
      'Something went wrong on our side; retry later, and quote the X-Request-Id if it persists',
    ),
  stopping: (retryAfterSeconds: number) =>
    new HttpError(
      'unavailable',
      `This instance is stopping; retry after ${retryAfterSeconds} seconds, on a new connection (another instance answers it)`,
      { 'retry-after': String(retryAfterSeconds) },
    ),
  unavailable: (dependency: 'database' | 'redis', retryAfterSeconds: number) =>
    new HttpError(
      'unavailable',
      `The ${dependency === 'redis' ? 'rate-limit store (Redis)' : 'database'} does not answer; retry after ${retryAfterSeconds} seconds`,
      { 'retry-after': String(retryAfterSeconds) },
    ),
} as const;

const OTHER_ENVIRONMENT: Readonly<Record<string, string>> = {
  pa_live_: 'a pa_test_ key is for staging; this API takes pa_live_ keys (production)',
  pa_test_: 'a pa_live_ key is for production; this API takes pa_test_ keys (staging)',
};

/**
 * Why a key was not even looked up, in words a person can act on: another scheme than Bearer, a
 * key of the other environment, an admin token, or a typo the check characters caught. The same
 * code and status for each; nothing of the credential is repeated but a scheme's name.
 */
function malformedKeyMessage(keyPrefix: string, authorization: string | undefined): string {
  const fallback = `API key is not valid: expected Authorization: Bearer ${keyPrefix} followed by 36 letters and digits`;
  if (authorization === undefined) return fallback;
  const scheme = /^\s*([A-Za-z][A-Za-z0-9-]{0,19})(?:\s|$)/.exec(authorization)?.[1];
  if (scheme === undefined || !/^bearer$/i.test(scheme)) {
    return scheme === undefined
      ? `API key is not valid: the Authorization header must start with Bearer: Authorization: Bearer ${keyPrefix}...`
      : `API key is not valid: the Authorization header uses the ${scheme} scheme; send Authorization: Bearer ${keyPrefix}...`;
  }
  const token = authorization.trim().slice(scheme.length).trim();
  const otherPrefix = keyPrefix === 'pa_live_' ? 'pa_test_' : 'pa_live_';
  if (token.startsWith(otherPrefix)) {
    return `API key is for the other environment: ${OTHER_ENVIRONMENT[keyPrefix] ?? fallback}`;
  }
  if (token.startsWith('pa_admin_')) {
    return 'API key is not valid: an admin token opens the admin API only; send an API key here';
  }
  if (
    token.length === keyPrefix.length + 36 &&
    /^[0-9A-Za-z]{36}$/.test(token.slice(keyPrefix.length))
  ) {
    return 'API key is not valid: a character is wrong (its check characters do not match); copy it again whole';
  }
  return fallback;
}
