import { Type, type TSchema } from '@sinclair/typebox';
import { requiredScopeOf } from '../../domain/api-keys/scopes.js';
import { errorBody, ERRORS } from '../errors/error-table.js';
import { ErrorSchema } from '../errors/error.schema.js';
import type { ErrorCode } from '../errors/http-error.js';

type HeaderDoc = Record<string, { description: string; schema: { type: string; format?: string } }>;

const integer = { type: 'integer' };
const text = { type: 'string' };

/** Sent with every response under /v1, errors included. */
export const RATE_LIMIT_HEADERS: HeaderDoc = {
  'X-RateLimit-Limit': {
    description: 'Requests allowed in the window in force (the one with the fewest left).',
    schema: integer,
  },
  'X-RateLimit-Remaining': { description: 'Requests left in that window.', schema: integer },
  'X-RateLimit-Reset': {
    description: 'When that window resets, in Unix seconds.',
    schema: integer,
  },
  'RateLimit-Policy': {
    description:
      'Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`.',
    schema: text,
  },
  RateLimit: {
    description:
      'Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`.',
    schema: text,
  },
};

/** Sent with every 200 and 304 of listPets and getPet (answers/conditional-answer.ts). */
export const REVALIDATION_HEADERS: HeaderDoc = {
  ETag: {
    description:
      'Strong entity tag of this representation, the same on every instance for the same bytes; a compressed answer has its own. Send it back in `If-None-Match` to revalidate.',
    schema: text,
  },
  'Cache-Control': {
    description: '`private, no-cache`: keep the answer, but revalidate it before each use.',
    schema: text,
  },
  Vary: {
    description: '`Accept-Encoding` (with `Origin` first when CORS is on).',
    schema: text,
  },
};

/** The 200's of listPets and getPet also say how their body is compressed. */
export const CONTENT_ENCODING_HEADER: HeaderDoc = {
  'Content-Encoding': {
    description:
      '`br` or `gzip`, when the body is 1 KiB or more and `Accept-Encoding` allows it (q-values honoured, `br` preferred); absent for an uncompressed body.',
    schema: text,
  },
};

/** A 304 of listPets or getPet: no body, the tag, the rate-limit headers. */
export function notModifiedResponse(headers?: HeaderDoc) {
  // `type: 'null'`: @fastify/swagger then documents no content at all.
  return {
    type: 'null',
    description:
      'Not Modified: `If-None-Match` names the current answer; keep using the one you hold. No body; counts against your limits.',
    headers: swaggerHeaders({ ...RATE_LIMIT_HEADERS, ...REVALIDATION_HEADERS, ...headers }),
  };
}

/** Headers of error responses, by status. */
const ERROR_HEADERS: Partial<Record<number, HeaderDoc>> = {
  401: {
    'WWW-Authenticate': {
      description:
        'RFC 6750 challenge: `Bearer realm="pets"`, with `error="invalid_token"` when a key was sent.',
      schema: text,
    },
  },
  403: {
    'WWW-Authenticate': {
      description:
        'RFC 6750 challenge naming the scope the key lacks: `Bearer realm="pets", error="insufficient_scope", scope="pets:write"`.',
      schema: text,
    },
  },
  429: {
    'Retry-After': {
      description:
        'Whole seconds to wait: until the refusing window resets, or the ban ends. Then back off exponentially with jitter.',
      schema: integer,
    },
  },
  503: {
    'Retry-After': {
      description: 'Whole seconds to wait before retrying.',
      schema: integer,
    },
  },
};

/**
 * @fastify/swagger reads each response header as the header's schema, lifts its description out
 * and wraps the rest in `schema`. Given the OpenAPI form, it would nest it into
 * `schema: {schema: ...}`, a schema that accepts any value.
 */
function swaggerHeaders(headers: HeaderDoc) {
  return Object.fromEntries(
    Object.entries(headers).map(([name, { description, schema }]) => [
      name,
      { ...schema, description },
    ]),
  );
}

/** A response as both Fastify's serializer and the OpenAPI document read it. */
export function jsonResponse(
  description: string,
  schema: TSchema,
  headers?: HeaderDoc,
  examples?: Record<string, { summary: string; value: unknown }>,
) {
  return {
    description,
    headers: swaggerHeaders({ ...RATE_LIMIT_HEADERS, ...headers }),
    content: { 'application/json': { schema, ...(examples ? { examples } : {}) } },
  };
}

type Example<C extends ErrorCode> = { readonly code: C; readonly message: string };
/** Where an operation refuses something of its own, its example names that, e.g. petId. */
export type OwnExamples = { readonly [C in ErrorCode]?: Example<C> };

/**
 * Error responses documented for an operation, by status, each with one example body per code it
 * can carry: the table's example, or the operation's own.
 */
export function errorResponses(codes: readonly ErrorCode[], own: OwnExamples = {}) {
  // Every operation can be refused by the rate limiter, fail on our side, or meet an outage.
  const always: ErrorCode[] = ['rate_limited', 'api_key_banned', 'internal_error', 'unavailable'];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, ...always]) {
    const { status } = ERRORS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<number, ReturnType<typeof jsonResponse>> = {};
  for (const [status, list] of byStatus) {
    const examples = Object.fromEntries(
      list.map((code) => [
        code,
        { summary: code, value: errorBody(own[code] ?? ERRORS[code].example) },
      ]),
    );
    responses[status] = jsonResponse(
      list.map((code) => `\`${code}\`: ${ERRORS[code].when}`).join(' '),
      Type.Ref(ErrorSchema),
      ERROR_HEADERS[status],
      examples,
    );
  }
  return responses;
}

/** The bearer scheme of the pet API's document (openapi.plugin.ts). */
export const API_SECURITY_SCHEME = 'bearerAuth';

/**
 * The `security` requirement of an operation (by operationId): the bearer scheme with the scope
 * the key needs. OpenAPI 3.1 lets a requirement on a scheme other than OAuth2 list role names
 * (Security Requirement Object); here they are the key's scopes, named as the 403
 * `insufficient_scope` challenge names them.
 */
export function scopeSecurity(operationId: string): Array<Record<string, string[]>> {
  const scope = requiredScopeOf(operationId);
  if (scope === undefined) throw new Error(`${operationId} needs no scope: it is no operation`);
  return [{ [API_SECURITY_SCHEME]: [scope] }];
}
