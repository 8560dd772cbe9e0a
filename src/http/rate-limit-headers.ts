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

/**
 * The same headers as lines of a raw HTTP response (`Name: value\r\n` each), for the refusals
 * written straight to the socket before any route or reply exists (src/http/http-server.ts).
 */
export function rateLimitHeaderLines(state: RateState): string {
  const { inForce, windows, decidedAt } = state;
  const policy = windows.map((w) => `"${w.name}";q=${w.limit};w=${w.lengthSeconds}`).join(', ');
  const remaining = windows
    .map((w) => `"${w.name}";r=${w.remaining};t=${Math.ceil((w.resetAt - decidedAt) / 1000)}`)
    .join(', ');
  return (
    `X-RateLimit-Limit: ${inForce.limit}\r\n` +
    `X-RateLimit-Remaining: ${inForce.remaining}\r\n` +
    `X-RateLimit-Reset: ${Math.ceil(inForce.resetAt / 1000)}\r\n` +
    `RateLimit-Policy: ${policy}\r\n` +
    `RateLimit: ${remaining}\r\n`
  );
}

/**
 * `X-RateLimit-*` describe the window in force (fewest left); `RateLimit-Policy` and `RateLimit`
 * (draft-ietf-httpapi-ratelimit-headers-11) describe every window.
 */
export function setRateLimitHeaders(reply: FastifyReply, state: RateState): void {
  const { inForce, windows, decidedAt } = state;
  // Built by hand: this runs on every response of the API scope.
  let policy = '';
  let remaining = '';
  for (const w of windows) {
    const separator = policy === '' ? '' : ', ';
    policy += `${separator}"${w.name}";q=${w.limit};w=${w.lengthSeconds}`;
    remaining += `${separator}"${w.name}";r=${w.remaining};t=${Math.ceil((w.resetAt - decidedAt) / 1000)}`;
  }
  void reply
    .header('x-ratelimit-limit', String(inForce.limit))
    .header('x-ratelimit-remaining', String(inForce.remaining))
    .header('x-ratelimit-reset', String(Math.ceil(inForce.resetAt / 1000)))
    .header('ratelimit-policy', policy)
    .header('ratelimit', remaining);
}
