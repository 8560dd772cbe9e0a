import type { Weighed } from '../../domain/cache/store-cache.js';

/**
 * A 200 answer's body and its own headers (content type, links, deprecation...), built once and
 * cached (StoreCache) while the data behind it cannot change. Every writer sends it as it is: the
 * routes through Fastify (apps/reply-answer.ts) and the fast path (fast-path/), each adding the
 * headers of every answer (response-headers.ts) and the request's rate-limit headers.
 */
export class CachedAnswer implements Weighed {
  /** The body's length in bytes, measured once. */
  readonly contentLength: string;
  /** About the bytes this answer takes in memory (strings count two bytes a character). */
  readonly weight: number;

  constructor(
    readonly body: string,
    /** The answer's own headers as pairs (name, value, ...), lower-case names. */
    readonly headers: readonly string[],
  ) {
    this.contentLength = String(Buffer.byteLength(body));
    let chars = body.length;
    for (const part of headers) chars += part.length;
    this.weight = 2 * chars;
  }
}
