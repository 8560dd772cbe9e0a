import { Type, type TSchema } from '@sinclair/typebox';
import { ErrorSchema } from './error.schema.js';
import { ERROR_STATUS, type ErrorCode } from './errors.js';

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

const RETRY_AFTER: HeaderDoc = {
  'Retry-After': {
    description:
      'Whole seconds to wait: until the refusing window resets, or the ban ends. Then back off exponentially with jitter.',
    schema: integer,
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
export function jsonResponse(description: string, schema: TSchema, headers?: HeaderDoc) {
  return {
    description,
    headers: swaggerHeaders({ ...RATE_LIMIT_HEADERS, ...headers }),
    content: { 'application/json': { schema } },
  };
}

/** Error responses documented for an operation, each listing the codes it can carry. */
export function errorResponses(codes: readonly ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  // Every operation can be refused by the rate limiter and can fail on our side.
  const always: ErrorCode[] = ['rate_limited', 'api_key_banned', 'internal_error'];
  for (const code of [...codes, ...always]) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<number, ReturnType<typeof jsonResponse>> = {};
  for (const [status, list] of byStatus) {
    responses[status] = jsonResponse(
      `Error: ${list.join(', ')}`,
      Type.Ref(ErrorSchema),
      status === 429 ? RETRY_AFTER : undefined,
    );
  }
  return responses;
}
