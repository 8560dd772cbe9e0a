import type { FastifyReply } from 'fastify';
import type { RateState } from '../../domain/rate-limits/rate-limiter.js';
import type { CachedAnswer } from '../answers/cached-answer.js';
import { RATE_LIMIT_VALUE_HEADERS, rateLimitHeaderValues } from '../answers/rate-limit-headers.js';

/**
 * A 200 of the one definition (answers/pet-answers.ts) through a Fastify reply: its own headers,
 * then its body as it is (Fastify does not serialize a string again).
 */
export function sendAnswer(reply: FastifyReply, answer: CachedAnswer): FastifyReply {
  const { headers } = answer;
  for (let i = 0; i < headers.length; i += 2) {
    void reply.header(headers[i] as string, headers[i + 1]);
  }
  void reply.header('content-length', answer.contentLength);
  return reply.send(answer.body);
}

/** The rate-limit headers (answers/rate-limit-headers.ts) on a Fastify reply. */
export function setRateLimitHeaders(reply: FastifyReply, state: RateState): void {
  const values = rateLimitHeaderValues(state);
  for (let i = 0; i < RATE_LIMIT_VALUE_HEADERS.length; i++) {
    void reply.header(RATE_LIMIT_VALUE_HEADERS[i] as string, values[i]);
  }
}
