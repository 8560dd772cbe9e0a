import { expect } from 'vitest';

export interface ParsedWindows {
  [name: string]: Record<string, number>;
}

/** Parses `"minute";r=59;t=41, "day";r=999;t=43200` (and the Policy form) into numbers by window. */
export function parseRateLimitHeader(value: string | null): ParsedWindows {
  const result: ParsedWindows = {};
  for (const item of (value ?? '').split(',')) {
    const [name, ...params] = item.trim().split(';');
    if (name === undefined || !/^"[a-z]+"$/.test(name)) throw new Error(`bad item ${item}`);
    result[name.slice(1, -1)] = Object.fromEntries(
      params.map((p) => {
        const [k, v] = p.split('=');
        return [k ?? '', Number(v)];
      }),
    );
  }
  return result;
}

/** The X-RateLimit-* trio as numbers. */
export function xRateLimit(headers: Headers): { limit: number; remaining: number; reset: number } {
  return {
    limit: Number(headers.get('x-ratelimit-limit')),
    remaining: Number(headers.get('x-ratelimit-remaining')),
    reset: Number(headers.get('x-ratelimit-reset')),
  };
}

/** Every rate-limit header a /v1 response must carry, well formed. */
export function expectRateLimitHeaders(headers: Headers): void {
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    expect(headers.get(name), name).toMatch(/^\d+$/);
  }
  expect(headers.get('ratelimit-policy')).toMatch(
    /^"[a-z]+";q=\d+;w=\d+(, "[a-z]+";q=\d+;w=\d+)*$/,
  );
  expect(headers.get('ratelimit')).toMatch(/^"[a-z]+";r=\d+;t=\d+(, "[a-z]+";r=\d+;t=\d+)*$/);
}
