import type { IncomingHttpHeaders } from 'node:http';
import Negotiator from 'negotiator';
import type { CachedAnswer, Coding, Sent } from './cached-answer.js';

/**
 * THE DECISION of what a request for an answer of listPets or getPet gets (RFC 9110 8.4, 12.5.3,
 * 13.1.2), made here once for both writers (the routes and the fast path): the representation
 * Accept-Encoding allows (br before gzip, q-values honoured; identity when nothing else is
 * acceptable, never a 406), then a 304 when If-None-Match names that representation's tag.
 */

/** Smaller bodies are sent as they are, unless the client refuses identity. */
export const COMPRESS_FROM_BYTES = 1024;

/** The codings in the service's order of preference, for ties in the client's q-values. */
const PREFERRED = ['br', 'gzip', 'identity'] as const;

/** What an Accept-Encoding value allows. */
interface Acceptable {
  /** The best coding for a large body: undefined sends identity. */
  readonly large: Coding | undefined;
  /** The best for a small body: identity unless refused. */
  readonly small: Coding | undefined;
}

// @types/negotiator does not declare the `preferred` option that negotiator 1.x takes.
type Ranked = (
  this: Negotiator,
  available: readonly string[],
  options: { preferred: readonly string[] },
) => string[];
const encodings = Negotiator.prototype.encodings as unknown as Ranked;

function acceptableFor(acceptEncoding: string): Acceptable {
  const negotiator = new Negotiator({ headers: { 'accept-encoding': acceptEncoding } });
  const ranked = encodings.call(negotiator, PREFERRED, { preferred: PREFERRED });
  const best = ranked[0];
  const firstCoding = ranked.find((coding): coding is Coding => coding !== 'identity');
  return {
    large: best === 'br' || best === 'gzip' ? best : undefined,
    small: ranked.includes('identity') ? undefined : firstCoding,
  };
}

/**
 * Clients send few distinct values (each library its own), so each is negotiated once; the table
 * starts over when full, so odd values cannot grow it.
 */
const known = new Map<string, Acceptable>();
const KNOWN_MAX = 256;

/** The coding to send a body of `bytes` in, undefined for identity. */
export function codingFor(acceptEncoding: string | undefined, bytes: number): Coding | undefined {
  // Absent or empty: identity only (RFC 9110 12.5.3).
  if (acceptEncoding === undefined || acceptEncoding === '') return undefined;
  let acceptable = known.get(acceptEncoding);
  if (acceptable === undefined) {
    if (known.size >= KNOWN_MAX) known.clear();
    acceptable = acceptableFor(acceptEncoding);
    known.set(acceptEncoding, acceptable);
  }
  return bytes >= COMPRESS_FROM_BYTES ? acceptable.large : acceptable.small;
}

/**
 * Whether If-None-Match names `etag`: `*`, or a list of tags compared weakly (a `W/` tag matches
 * its strong twin), as RFC 9110 13.1.2 has it for this header.
 */
export function noneMatchNames(ifNoneMatch: string, etag: string): boolean {
  // What a client that revalidates sends: the one tag it holds.
  if (ifNoneMatch === etag) return true;
  for (const part of ifNoneMatch.split(',')) {
    const tag = part.trim();
    if (tag === '*' || tag === etag || (tag.startsWith('W/') && tag.slice(2) === etag)) return true;
  }
  return false;
}

/**
 * What to send for `answer` to a request with these headers: at hand, or a promise when a
 * compressed representation is still being made (on the thread pool). A 304 needs only the tag,
 * which is known before anything is compressed.
 */
export function answerFor(
  answer: CachedAnswer,
  headers: IncomingHttpHeaders,
): Sent | Promise<Sent> {
  const coding = codingFor(headers['accept-encoding'], answer.bytes);
  const ifNoneMatch = headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    // The 304 is made once per representation and holds its tag: nothing is formatted per request.
    const notModified = answer.notModified(coding);
    if (noneMatchNames(ifNoneMatch, notModified.etag)) return notModified;
  }
  if (coding === undefined) return answer.identity;
  const compressed = answer.compressed(coding);
  // Should compression ever fail, the answer goes out as it is.
  return compressed instanceof Promise ? compressed.catch(() => answer.identity) : compressed;
}
