import { RATE_LIMIT_HEADER_NAMES } from './rate-limit-headers.js';

/**
 * THE TABLE of headers every answer of the service carries, whichever writer sends it: Fastify
 * (plugins/answer-headers.plugin.ts), the fast path (fast-path/), and the refusals written straight
 * to the socket (answers/raw-response.ts). test/http/response-headers.test.ts holds the three side
 * by side.
 *
 * What a JSON API needs on every answer (OWASP REST Security): no content sniffing; HTTPS only once
 * a browser has seen the host over TLS; a policy under which an answer opened as a page loads
 * nothing and is framed by no one; and no caching, since every answer depends on its credential
 * and carries the rate-limit counts of its moment (the answers that may be revalidated say so
 * themselves). Web pages (/docs, the admin console) replace the policy with their own, in their
 * scope.
 */
export const EVERY_ANSWER_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'cache-control': 'no-store',
});

/** The request id, on every answer too: the client's when it is a sane token (request-id.ts). */
export const REQUEST_ID_HEADER = 'x-request-id';

/** The content type of every JSON body the service writes. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** The headers a browser script may read of an answer when CORS is on (CORS_ORIGINS). */
export const CORS_EXPOSED_HEADERS: readonly string[] = [
  'Link',
  'Location',
  'X-Request-Id',
  'Deprecation',
  'Sunset',
  'Idempotent-Replayed',
  ...RATE_LIMIT_HEADER_NAMES,
];

/**
 * With CORS on (the public listener, CORS_ORIGINS set), every answer also varies by Origin and
 * names the headers a script may read: what @fastify/cors writes on every answer, here in the
 * table so that the fast path writes it too. @fastify/cors still decides, for a request with an
 * Origin, whether to allow it (and answers preflights); the fast path leaves those to it.
 */
export const CORS_ANSWER_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  vary: 'Origin',
  'access-control-expose-headers': CORS_EXPOSED_HEADERS.join(', '),
});

/** The table of a listener: EVERY_ANSWER_HEADERS, with CORS_ANSWER_HEADERS when CORS is on. */
export function answerHeadersFor(options: { cors: boolean }): Readonly<Record<string, string>> {
  return options.cors
    ? Object.freeze({ ...EVERY_ANSWER_HEADERS, ...CORS_ANSWER_HEADERS })
    : EVERY_ANSWER_HEADERS;
}

/**
 * The request id and a table as header pairs for Node's writeHead (name, value, name, value...),
 * in a new array the caller may go on filling.
 */
export function answerPairs(
  requestId: string,
  table: Readonly<Record<string, string>> = EVERY_ANSWER_HEADERS,
): string[] {
  const pairs = [REQUEST_ID_HEADER, requestId];
  for (const name in table) pairs.push(name, table[name] as string);
  return pairs;
}

/** The request id and the table as lines of a raw HTTP response (`name: value\r\n` each). */
export function answerLines(requestId: string): string {
  const pairs = answerPairs(requestId);
  let lines = '';
  for (let i = 0; i < pairs.length; i += 2) lines += `${pairs[i]}: ${pairs[i + 1]}\r\n`;
  return lines;
}

/**
 * The operator console's policy (/admin/ on the admin listener): its own script and styles only,
 * calls to its own origin only (the admin API), nothing inline and no eval, framed by no one.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
