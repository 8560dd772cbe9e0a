import type { FastifyReply } from 'fastify';
import type { RateDecision, RateLimiter } from '../../domain/rate-limits/rate-limiter.js';
import { HttpError } from '../errors.js';
import type { Metrics } from './metrics.js';

/** The headers clients read, named for CORS and the OpenAPI document alike. */
export const RATE_LIMIT_HEADER_NAMES = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
  'Retry-After',
] as const;

/**
 * `X-RateLimit-*` describe the window in force (fewest left); `RateLimit-Policy` and `RateLimit`
 * (draft-ietf-httpapi-ratelimit-headers-11) describe every window.
 */
export function setRateLimitHeaders(reply: FastifyReply, decision: RateDecision): void {
  const { inForce, windows, decidedAt } = decision;
  void reply.headers({
    'x-ratelimit-limit': String(inForce.limit),
    'x-ratelimit-remaining': String(inForce.remaining),
    'x-ratelimit-reset': String(Math.ceil(inForce.resetAt / 1000)),
    'ratelimit-policy': windows
      .map((w) => `"${w.name}";q=${w.limit};w=${w.lengthSeconds}`)
      .join(', '),
    ratelimit: windows
      .map((w) => `"${w.name}";r=${w.remaining};t=${Math.ceil((w.resetAt - decidedAt) / 1000)}`)
      .join(', '),
  });
}

/** The 429 for a refused decision, counted in metrics. */
export function refusal(
  decision: Extract<RateDecision, { allowed: false }>,
  metrics: Metrics,
  subject: 'key' | 'address',
): HttpError {
  metrics.rateLimited.inc({ code: decision.reason });
  const seconds = decision.retryAfterSeconds;
  const { limit, name } = decision.inForce;
  const message =
    decision.reason === 'api_key_banned'
      ? `This API key is banned for ${seconds} more seconds for sending requests after 429 responses; wait for Retry-After, then back off exponentially`
      : subject === 'key'
        ? `Rate limit of ${limit} requests per ${name} reached for this API key; retry after ${seconds} seconds (Retry-After)`
        : `Too many requests without a valid API key from this address (${limit} per ${name}); retry after ${seconds} seconds`;
  return new HttpError(decision.reason, message, { 'retry-after': String(seconds) });
}

/** For public routes under /v1 (the OpenAPI document): every request draws on the address budget. */
export function limitByAddress(
  limiter: RateLimiter,
  metrics: Metrics,
): (request: { ip: string }, reply: FastifyReply) => Promise<void> {
  return async (request, reply) => {
    const decision = await limiter.hitAddress(request.ip);
    setRateLimitHeaders(reply, decision);
    if (!decision.allowed) throw refusal(decision, metrics, 'address');
  };
}
