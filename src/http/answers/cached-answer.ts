import { hash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Weighed } from '../../domain/cache/store-cache.js';

/** The content codings the service sends, besides identity. */
export type Coding = 'br' | 'gzip';

/**
 * What is sent for a request: a 200 with one representation of the answer (identity or
 * compressed), or a 304 naming it. Headers as pairs (name, value, ...), lower-case names.
 */
export interface Sent {
  readonly status: 200 | 304;
  /**
   * A 200's: the answer's own headers, Content-Encoding if any, ETag, Content-Length. A 304's: the
   * answer's own headers less Content-Type, and ETag (RFC 9110 15.4.5).
   */
  readonly headers: readonly string[];
  /** A 200's body on the wire: the text itself (identity) or its compressed bytes. */
  readonly body: string | Buffer | undefined;
  /**
   * The compressed bytes again as a latin1 string, for Node's own writer: given a string, Node
   * writes the head and the body as one string, given a Buffer as two chunks, which costs more.
   */
  readonly latin1?: string;
  /** The strong entity tag, quoted, naming exactly these bytes (RFC 9110 8.8.3). */
  readonly etag: string;
}

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/**
 * Brotli's middle quality: most of its ratio on JSON at a small part of quality 11's CPU, which
 * matters for pages compressed per request (those not cached).
 */
const BROTLI_OPTIONS = { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } };

/** Both run on libuv's thread pool, never on the event loop. */
const compress = (coding: Coding, body: string, size: number): Promise<Buffer> =>
  coding === 'br'
    ? brotli(body, {
        params: { ...BROTLI_OPTIONS.params, [constants.BROTLI_PARAM_SIZE_HINT]: size },
      })
    : gzipped(body);

function notModified(ownHeaders: readonly string[], etag: string): Sent {
  const headers: string[] = [];
  for (let i = 0; i < ownHeaders.length; i += 2) {
    if (ownHeaders[i] === 'content-type') continue;
    headers.push(ownHeaders[i] as string, ownHeaders[i + 1] as string);
  }
  headers.push('etag', etag);
  return { status: 304, headers, body: undefined, etag };
}

function ok(
  ownHeaders: readonly string[],
  body: string | Buffer,
  etag: string,
  length: string,
  coding?: Coding,
): Sent {
  const headers = [...ownHeaders];
  if (coding !== undefined) headers.push('content-encoding', coding);
  headers.push('etag', etag, 'content-length', length);
  return typeof body === 'string'
    ? { status: 200, headers, body, etag }
    : { status: 200, headers, body, etag, latin1: body.toString('latin1') };
}

/**
 * A 200 answer's body and its own headers (content type, links, deprecation...), built once and
 * cached (StoreCache) while the data behind it cannot change. Every writer sends it as it is: the
 * routes through Fastify (apps/reply-answer.ts) and the fast path (fast-path/), each adding the
 * headers of every answer (response-headers.ts) and the request's rate-limit headers, through
 * conditional-answer.ts, which picks the representation (identity or compressed) and decides 304.
 */
export class CachedAnswer implements Weighed {
  /** The body's length in bytes, measured once. */
  readonly contentLength: string;
  /** About the bytes this answer takes in memory (strings count two bytes a character). */
  readonly weight: number;
  /** The body's length in bytes, as a number (compression starts at 1 KiB). */
  readonly bytes: number;
  /**
   * The identity 200. Its tag hashes the answer's own headers and body, so the same answer has the
   * same tag on every instance and any change to either gives a new one.
   */
  readonly identity: Sent;
  /** The identity's tag, unquoted; a compressed representation's adds a suffix to it. */
  readonly #tag: string;
  /** The 304 of each representation, made when first asked for: most answers never are. */
  readonly #notModified = new Map<Coding | 'identity', Sent>();
  /** The compressed 200s, made at most once each (a promise while being made). */
  readonly #compressed = new Map<Coding, Sent | Promise<Sent>>();

  constructor(
    readonly body: string,
    /** The answer's own headers as pairs (name, value, ...), lower-case names. */
    readonly headers: readonly string[],
  ) {
    this.bytes = Buffer.byteLength(body);
    this.contentLength = String(this.bytes);
    let chars = body.length;
    for (const part of headers) chars += part.length;
    this.weight = 2 * chars;
    // Each header part and a line end, a blank line, the body, hashed in one call: a Hash object
    // fed part by part makes two native calls a part, and every answer read from storage is tagged.
    let tagged = '';
    for (const part of headers) tagged += `${part}\n`;
    this.#tag = hash('sha256', `${tagged}\n${body}`, 'base64url').slice(0, 27);
    this.identity = ok(headers, body, this.etag(undefined), this.contentLength);
  }

  /** The strong tag of a representation: identity (undefined) or compressed with `coding`. */
  etag(coding: Coding | undefined): string {
    return coding === undefined ? `"${this.#tag}"` : `"${this.#tag}-${coding}"`;
  }

  /** The 304 naming a representation: identity (undefined) or compressed with `coding`. */
  notModified(coding: Coding | undefined): Sent {
    const key = coding ?? 'identity';
    let sent = this.#notModified.get(key);
    if (sent === undefined) {
      sent = notModified(this.headers, this.etag(coding));
      this.#notModified.set(key, sent);
    }
    return sent;
  }

  /**
   * The 200 compressed with `coding`: at hand once made, else a promise shared by every request
   * that asks before it is ready.
   */
  compressed(coding: Coding): Sent | Promise<Sent> {
    const known = this.#compressed.get(coding);
    if (known !== undefined) return known;
    const made = compress(coding, this.body, this.bytes).then(
      (bytes) => {
        const done = ok(this.headers, bytes, this.etag(coding), String(bytes.length), coding);
        this.#compressed.set(coding, done);
        return done;
      },
      (error: unknown) => {
        // Not kept: the next request tries again.
        this.#compressed.delete(coding);
        throw error;
      },
    );
    this.#compressed.set(coding, made);
    return made;
  }
}
