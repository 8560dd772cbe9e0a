import { Type, type TSchema } from '@sinclair/typebox';
import { errorBody, ERRORS } from '../../errors/error-table.js';
import { ErrorSchema } from '../../errors/error.schema.js';
import type { ErrorCode } from '../../errors/http-error.js';
import type { OwnExamples } from '../../openapi/openapi-responses.js';

/** Header docs in the form @fastify/swagger reads (it lifts `description` out of the schema). */
type Headers = Record<string, { type: string; description: string }>;

const ERROR_HEADERS: Partial<Record<number, Headers>> = {
  401: {
    'WWW-Authenticate': {
      type: 'string',
      description:
        'RFC 6750 challenge: `Bearer realm="petstore-admin"`, with `error="invalid_token"` when a token was sent.',
    },
  },
  429: {
    'Retry-After': {
      type: 'integer',
      description: 'Whole seconds until the address budget for requests without a token resets.',
    },
  },
  503: {
    'Retry-After': { type: 'integer', description: 'Whole seconds to wait before retrying.' },
  },
};

/** A response as both Fastify's serializer and the admin OpenAPI document read it. */
export function adminJson(description: string, schema: TSchema, headers?: Headers) {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: { 'application/json': { schema } },
  };
}

/**
 * The error responses of an admin operation, by status, with one example per code from the one
 * error table (or the operation's own). Every operation can be refused for its token or the
 * address budget, fail on our side, or meet an outage.
 */
export function adminErrors(codes: readonly ErrorCode[], own: OwnExamples = {}) {
  const always: ErrorCode[] = ['unauthorized', 'rate_limited', 'internal_error', 'unavailable'];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, ...always]) {
    const { status } = ERRORS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<number, object> = {};
  for (const [status, list] of byStatus) {
    const examples = Object.fromEntries(
      list.map((code) => [
        code,
        { summary: code, value: errorBody(own[code] ?? ERRORS[code].example) },
      ]),
    );
    responses[status] = {
      description: list.map((code) => `\`${code}\`: ${ERRORS[code].when}`).join(' '),
      ...(ERROR_HEADERS[status] ? { headers: ERROR_HEADERS[status] } : {}),
      content: { 'application/json': { schema: Type.Ref(ErrorSchema), examples } },
    };
  }
  return responses;
}
