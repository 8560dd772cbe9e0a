import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type DomainErrorCode } from '../domain/errors.js';

/**
 * The one table of error codes. Every error response is `{code, message, status}` with `status`
 * taken from here; the README's table and the OpenAPI document are checked against it by tests.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  invalid_json: 400,
  invalid_body: 400,
  invalid_parameter: 400,
  unauthorized: 401,
  not_found: 404,
  method_not_allowed: 405,
  idempotency_key_in_use: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  api_key_banned: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const satisfies Record<DomainErrorCode | string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
}

/** A refusal decided in the HTTP layer (bad header, bad JSON, ...). */
export class HttpError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export function errorBody(code: ErrorCode, message: string): ErrorBody {
  return { code, message, status: ERROR_STATUS[code] };
}

export function sendError(reply: FastifyReply, code: ErrorCode, message: string): FastifyReply {
  return reply.code(ERROR_STATUS[code]).type('application/json').send(errorBody(code, message));
}

/** Fastify's own errors that are really the client's, mapped to our codes. */
const FASTIFY_CODES: Readonly<Record<string, { code: ErrorCode; message: string }>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: {
    code: 'payload_too_large',
    message: 'Request body is larger than 16 KiB',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: 'unsupported_media_type',
    message: 'Send the request body as Content-Type: application/json',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    code: 'invalid_json',
    message: 'Request body is empty; send a JSON object',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: 'bad_request',
    message: 'Content-Length does not match the body sent',
  },
};

export function toErrorBody(error: unknown): { body: ErrorBody; headers: Record<string, string> } {
  if (error instanceof HttpError) {
    return { body: errorBody(error.code, error.message), headers: { ...error.headers } };
  }
  if (error instanceof DomainError)
    return { body: errorBody(error.code, error.message), headers: {} };
  const fastifyError = error as Partial<FastifyError>;
  const known = fastifyError.code === undefined ? undefined : FASTIFY_CODES[fastifyError.code];
  if (known) return { body: errorBody(known.code, known.message), headers: {} };
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return {
      body: { code: 'bad_request', message: 'The request could not be understood', status },
      headers: {},
    };
  }
  return {
    body: errorBody(
      'internal_error',
      'Something went wrong on our side; retry later, and quote the X-Request-Id if it persists',
    ),
    headers: {},
  };
}

export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const { body, headers } = toErrorBody(error);
  if (body.status >= 500) request.log.error({ err: error }, 'request failed');
  else request.log.info({ code: body.code }, body.message);
  void reply.code(body.status).headers(headers).type('application/json').send(body);
}
