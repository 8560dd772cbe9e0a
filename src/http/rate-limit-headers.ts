import type { FastifyReply } from 'fastify';
import type { RateState } from '../domain/rate-limits/rate-limiter.js';

/** The headers clients read, named for CORS and the OpenAPI document alike. */
export const RATE_LIMIT_HEADER_NAMES = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
  'Retry-After',
] as const;

/** The names the values of rateLimitHeaderValues go under, in their order. */
const NAMES = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit-policy',
  'ratelimit',
] as const;

/**
 * `X-RateLimit-*` describe the window in force (fewest left); `RateLimit-Policy` and `RateLimit`
 * (draft-ietf-httpapi-ratelimit-headers-11) describe every window. In the order of NAMES.
 */
export function rateLimitHeaderValues(state: RateState): string[] {
  const { inForce, windows, decidedAt } = state;
  // Built by hand: this runs on every response of the API scope.
  let policy = '';
  let remaining = '';
  for (const w of windows) {
    const separator = policy === '' ? '' : ', ';
    policy += `${separator}"${w.name}";q=${w.limit};w=${w.lengthSeconds}`;
    remaining += `${separator}"${w.name}";r=${w.remaining};t=${Math.ceil((w.resetAt - decidedAt) / 1000)}`;
  }
  return [
    String(inForce.limit),
    String(inForce.remaining),
    String(Math.ceil(inForce.resetAt / 1000)),
    policy,
    remaining,
  ];
}

/** The rate-limit headers as name, value, name, value...: what Node's writeHead takes. */
export function rateLimitHeaderPairs(state: RateState, into: string[]): void {
  const values = rateLimitHeaderValues(state);
  for (let i = 0; i < NAMES.length; i++) into.push(NAMES[i] as string, values[i] as string);
}

/**
 * The same headers as lines of a raw HTTP response (`Name: value\r\n` each), for the refusals
 * written straight to the socket before any route or reply exists (src/http/http-server.ts).
 */
export function rateLimitHeaderLines(state: RateState): string {
  const values = rateLimitHeaderValues(state);
  return RATE_LIMIT_HEADER_NAMES.slice(0, NAMES.length)
    .map((name, i) => `${name}: ${values[i]}\r\n`)
    .join('');
}

export function setRateLimitHeaders(reply: FastifyReply, state: RateState): void {
  const values = rateLimitHeaderValues(state);
  for (let i = 0; i < NAMES.length; i++) void reply.header(NAMES[i] as string, values[i]);
}
