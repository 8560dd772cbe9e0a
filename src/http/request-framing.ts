import type { IncomingMessage } from 'node:http';
import { type HttpError, httpErrors } from './errors/http-error.js';
import { API_SCOPE } from './scopes.js';

/**
 * Requests whose framing or target two readers could take differently (a proxy and this service),
 * refused with 400 before anything reads them on: the origin-form target is the only one a client
 * sends an origin server (RFC 9112 3.2.1), one Host (3.2), HTTP/1.0 or 1.1, and of the transfer
 * codings only `chunked` (a list such as `identity, chunked` is read as chunked by one parser and
 * as something else by another). Node accepts each of these; the fast path leaves them to Fastify.
 */
export function framingRefusal(request: IncomingMessage): HttpError | undefined {
  const version = request.httpVersion;
  if (version !== '1.1' && version !== '1.0') {
    return httpErrors.badFraming(`HTTP/${version} is not served; send HTTP/1.1`);
  }
  const url = request.url ?? '';
  if (!url.startsWith('/') && !(url === '*' && request.method === 'OPTIONS')) {
    return httpErrors.badFraming(
      `the request target must be a path (origin-form, "${API_SCOPE.prefix}/pets"), not a URL or anything else`,
    );
  }
  const { headers } = request;
  if (version === '1.1' && headers.host === undefined) return httpErrors.missingHost();
  const transferEncoding = headers['transfer-encoding'];
  if (transferEncoding !== undefined && transferEncoding.trim().toLowerCase() !== 'chunked') {
    return httpErrors.badFraming('the only Transfer-Encoding served is "chunked", alone');
  }
  const te = headers.te;
  if (typeof te === 'string' && /(?:^|,)\s*(?:chunked|identity)\s*(?:;|,|$)/i.test(te)) {
    return httpErrors.badFraming(
      'TE names a transfer coding of the message ("chunked"); leave TE out',
    );
  }
  if (countLines(request.rawHeaders, 'host') > 1) {
    return httpErrors.badFraming('the request carries more than one Host header; send exactly one');
  }
  return undefined;
}

/** How many header lines of `name` (lower case) the request has: Node keeps only the first Host. */
function countLines(rawHeaders: readonly string[], name: string): number {
  let lines = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const header = rawHeaders[i];
    if (header?.length === name.length && header.toLowerCase() === name) lines += 1;
  }
  return lines;
}
