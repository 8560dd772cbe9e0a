import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateState } from '../../domain/rate-limits/rate-limiter.js';
import type { CachedAnswer } from '../answers/cached-answer.js';
import { answerFor } from '../answers/conditional-answer.js';
import { RATE_LIMIT_VALUE_HEADERS, rateLimitHeaderValues } from '../answers/rate-limit-headers.js';
import { REVALIDATED_CACHE_CONTROL, varyByEncoding } from '../answers/response-headers.js';

/**
 * An answer of the one definition (answers/pet-answers.ts) through a Fastify reply, as
 * conditional-answer.ts decides for the request (a 200 in some coding, or a 304): its own headers,
 * then its body as it is (Fastify does not serialize a string or bytes again).
 */
export async function sendAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  answer: CachedAnswer,
): Promise<FastifyReply> {
  const sent = await answerFor(answer, request.headers);
  const { headers } = sent;
  for (let i = 0; i < headers.length; i += 2) {
    void reply.header(headers[i] as string, headers[i + 1]);
  }
  void reply.header('cache-control', REVALIDATED_CACHE_CONTROL);
  void reply.header('vary', varyByEncoding(reply.getHeader('vary') as string | undefined));
  return reply.code(sent.status).send(sent.body);
}

/** The rate-limit headers (answers/rate-limit-headers.ts) on a Fastify reply. */
export function setRateLimitHeaders(reply: FastifyReply, state: RateState): void {
  const values = rateLimitHeaderValues(state);
  for (let i = 0; i < RATE_LIMIT_VALUE_HEADERS.length; i++) {
    void reply.header(RATE_LIMIT_VALUE_HEADERS[i] as string, values[i]);
  }
}
