import type { RateState } from '../../domain/rate-limits/rate-limiter.js';

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
 * The names the values of writeRateLimitValues go under, in their order: the names above but
 * Retry-After (set with a refusal only), in lower case as Node sends them.
 */
export const RATE_LIMIT_VALUE_HEADERS: readonly string[] = RATE_LIMIT_HEADER_NAMES.filter(
  (name) => name !== 'Retry-After',
).map((name) => name.toLowerCase());

/**
 * `X-RateLimit-*` describe the window in force (fewest left); `RateLimit-Policy` and `RateLimit`
 * (draft-ietf-httpapi-ratelimit-headers-11) describe every window. The values, in the order of
 * RATE_LIMIT_VALUE_HEADERS.
 */
export function rateLimitHeaderValues(state: RateState): string[] {
  const { inForce, windows, decidedAt } = state;
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

/**
 * The same values written into header pairs laid out for Node's writeHead (name, value, ...):
 * the first at `at`, each next one two places on, after its name.
 */
export function writeRateLimitValues(state: RateState, into: string[], at: number): void {
  const values = rateLimitHeaderValues(state);
  for (let i = 0; i < values.length; i++) into[at + 2 * i] = values[i] as string;
}

/**
 * The same headers as lines of a raw HTTP response (`Name: value\r\n` each), for the refusals
 * written straight to the socket before any route or reply exists (raw-response.ts).
 */
export function rateLimitHeaderLines(state: RateState): string {
  const values = rateLimitHeaderValues(state);
  return RATE_LIMIT_HEADER_NAMES.slice(0, values.length)
    .map((name, i) => `${name}: ${values[i]}\r\n`)
    .join('');
}
