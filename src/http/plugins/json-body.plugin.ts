import fp from 'fastify-plugin';
import { httpErrors } from '../errors/http-error.js';
import { JsonSyntaxError, parseStrictJson } from '../validation/strict-json.js';
import { answeredBeforeRoute } from '../server/answered-sockets.js';
import { BODY_LIMIT_BYTES } from '../request-limits.js';

/** Fatal: a byte sequence that is not UTF-8 is refused, never replaced by U+FFFD and stored. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Where the first ill-formed UTF-8 sequence starts (Unicode Table 3-7), or -1. Only for the
 * message: the decoder above decides.
 */
export function firstInvalidUtf8Byte(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i] ?? 0;
    if (lead < 0x80) {
      i++;
      continue;
    }
    // The range of the second byte depends on the lead (no overlongs, surrogates or > U+10FFFF).
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) length = 2;
    else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead === 0xe0) low = 0xa0;
      if (lead === 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead === 0xf0) low = 0x90;
      if (lead === 0xf4) high = 0x8f;
    } else return i;
    for (let k = 1; k < length; k++) {
      const next = bytes[i + k];
      if (next === undefined || next < (k === 1 ? low : 0x80) || next > (k === 1 ? high : 0xbf)) {
        return i;
      }
    }
    i += length;
  }
  return -1;
}

/** Content-Type parameters (RFC 9110 §5.6.6): `; name=value`, the value a token or quoted. */
const PARAMETER =
  /[ \t]*;[ \t]*(?:([!#$%&'*+.^_`|~0-9A-Za-z-]+)=([!#$%&'*+.^_`|~0-9A-Za-z-]+|"(?:[^"\\]|\\.)*"))?/y;

/**
 * Whether a Content-Type that Fastify matched to application/json says the body is UTF-8: no
 * charset, or charset=utf-8 in any case, quoted or not. RFC 8259 §8.1 makes UTF-8 the only
 * encoding of JSON between systems; any other charset, or parameters we cannot read (so cannot
 * tell the charset), is a 415 rather than a body decoded as something it is not.
 */
export function isUtf8JsonContentType(contentType: string): boolean {
  const start = contentType.indexOf(';');
  if (start === -1) return true;
  const parameters = contentType.slice(start);
  PARAMETER.lastIndex = 0;
  while (PARAMETER.lastIndex < parameters.length) {
    const from = PARAMETER.lastIndex;
    const match = PARAMETER.exec(parameters);
    // What follows the last parameter may only be white space.
    if (match === null) return /^[ \t]*$/.test(parameters.slice(from));
    const [, name, value] = match;
    if (name?.toLowerCase() === 'charset') {
      const charset = value?.startsWith('"') ? value.slice(1, -1).replace(/\\(.)/g, '$1') : value;
      if (charset?.toLowerCase() !== 'utf-8') return false;
    }
  }
  return true;
}

/** The body's bytes as JSON: UTF-8 only, parsed by the one strict parser (src/http/validation/strict-json.ts). */
export function parseJsonBody(bytes: Uint8Array): unknown {
  if (bytes.length === 0) throw httpErrors.emptyJson();
  // RFC 8259 §8.1: senders MUST NOT add a byte order mark, parsers MAY ignore one. We refuse it,
  // as JSON.parse does: a body means one thing to every JSON reader, ours included.
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    throw httpErrors.invalidJson(
      'it starts with a byte order mark (EF BB BF); send UTF-8 without one',
    );
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw httpErrors.invalidJson(
      `it is not valid UTF-8 at byte ${firstInvalidUtf8Byte(bytes)}; send the body as UTF-8`,
    );
  }
  try {
    return parseStrictJson(text);
  } catch (error) {
    // Anything else is our bug: the error handler answers 500 without showing it.
    if (error instanceof JsonSyntaxError) throw httpErrors.invalidJson(error.message);
    throw error;
  }
}

/**
 * The content codings a body names other than identity (RFC 9110 §8.4), or undefined when none
 * does. A body we cannot decode is a 415 (RFC 9110 §15.5.16), not JSON that fails to parse.
 */
export function unsupportedContentEncoding(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const codings = header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length === 0) return undefined;
  // Only for the message: a coding is a token, so anything longer or stranger is not shown.
  return codings.every((coding) => /^[a-z0-9!#$%&'*+.^_`|~-]{1,40}$/.test(coding))
    ? codings.join(', ')
    : 'given';
}

/** application/json in UTF-8 is the only body this API takes; anything else is a 415. */
export const jsonBodyPlugin = fp(
  async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES },
      (request, body, done) => {
        // Answered already (a 408 while this body arrived): it is dropped, and done is never
        // called, so no handler runs; the connection closes when its lingering ends.
        if (answeredBeforeRoute(request.raw.socket)) return;
        try {
          const encoding = unsupportedContentEncoding(request.headers['content-encoding']);
          if (encoding !== undefined) throw httpErrors.unsupportedContentEncoding(encoding);
          if (!isUtf8JsonContentType(request.headers['content-type'] ?? '')) {
            throw httpErrors.unsupportedCharset();
          }
          done(null, parseJsonBody(body as Buffer));
        } catch (error) {
          done(error as Error, undefined);
        }
      },
    );
  },
  { name: 'json-body' },
);
