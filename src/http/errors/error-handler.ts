import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DependencyUnavailableError, DomainError } from '../../domain/errors.js';
import { BODY_LIMIT_KIB } from '../request-limits.js';
import { loggableHeaders } from '../../telemetry/logging/logger.js';
import { type ErrorBody, errorBody } from './error-table.js';
import { HttpError, httpErrors } from './http-error.js';

/** Seconds a client is asked to wait when a dependency is down: long enough to come back. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** Fastify's own errors that are really the client's, mapped to our factories. */
const FASTIFY_ERRORS: Readonly<Record<string, () => HttpError>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => httpErrors.payloadTooLarge(BODY_LIMIT_KIB),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: httpErrors.unsupportedMediaType,
  FST_ERR_CTP_EMPTY_JSON_BODY: httpErrors.emptyJson,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: httpErrors.badContentLength,
  FST_ERR_BAD_URL: httpErrors.badPath,
};

/** What to answer for anything thrown while handling a request. */
export function toHttpError(error: unknown): HttpError | DomainError {
  if (error instanceof HttpError || error instanceof DomainError) return error;
  if (error instanceof DependencyUnavailableError) {
    return httpErrors.unavailable(error.dependency, UNAVAILABLE_RETRY_AFTER_SECONDS);
  }
  const fastifyError = error as Partial<FastifyError>;
  const known = fastifyError.code === undefined ? undefined : FASTIFY_ERRORS[fastifyError.code];
  if (known) return known();
  const status = fastifyError.statusCode;
  // A client error we have no words for is a 400 bad_request: never a code under another status.
  if (status !== undefined && status >= 400 && status < 500) return httpErrors.badRequest();
  return httpErrors.internalError();
}

export function toErrorBody(error: unknown): { body: ErrorBody; headers: Record<string, string> } {
  const answer = toHttpError(error);
  return {
    body: errorBody(answer),
    headers: answer instanceof HttpError ? { ...answer.headers } : {},
  };
}

export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const { body, headers } = toErrorBody(error);
  // With a failure, the headers help find its cause (credentials in them are redacted).
  if (body.status >= 500) {
    request.log.error({ err: error, headers: loggableHeaders(request.headers) }, 'request failed');
  } else {
    // A client's mistake or a refusal: per request, so at the level of the access log.
    request.log.debug({ code: body.code }, body.message);
  }
  void reply.code(body.status).headers(headers).type('application/json').send(body);
}
