import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { rawConnect } from '../helpers/raw-http.js';
import type { Answer } from './checks.js';

/** How long a case waits for the server to answer and close before it counts as a hang. */
const ANSWER_WITHIN_MS = 10_000;

/** A body as the client reads it: a br or gzip answer (the fuzzer may accept them) decoded. */
function decoded(bytes: Buffer, encoding: string | undefined): Buffer {
  // A HEAD answer (or a 304) names the coding of a body it does not send.
  if (bytes.length === 0) return bytes;
  if (encoding === 'br') return brotliDecompressSync(bytes);
  if (encoding === 'gzip') return gunzipSync(bytes);
  return bytes;
}

/**
 * The answers in what a server sent on one connection (latin1), framed by Content-Length or
 * chunked encoding, or running to the close. A HEAD answer has no body whatever its headers say.
 */
export function parseAnswers(received: string, head: boolean): Answer[] {
  const answers: Answer[] = [];
  let rest = received;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? NaN);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let body = '';
    rest = rest.slice(end + 4);
    if (head || status === 204 || status === 304 || (status >= 100 && status < 200)) {
      // no body
    } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      for (;;) {
        const eol = rest.indexOf('\r\n');
        const size = parseInt(rest.slice(0, eol), 16);
        if (eol < 0 || Number.isNaN(size)) break;
        body += rest.slice(eol + 2, eol + 2 + size);
        rest = rest.slice(eol + 2 + size + 2);
        if (size === 0) break;
      }
    } else if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      body = rest.slice(0, length);
      rest = rest.slice(length);
    } else {
      body = rest;
      rest = '';
    }
    answers.push({
      status,
      headers,
      body: decoded(Buffer.from(body, 'latin1'), headers['content-encoding']).toString('utf8'),
      ...(head ? { head } : {}),
    });
    // An interim answer (100 Continue) is followed by the final one.
  }
  return answers;
}

/**
 * Writes the bytes on a fresh connection, half-closes it (the client has nothing more to say) and
 * reads until the server closes. `timedOut` when the server neither answered nor closed in time.
 */
export async function sendRaw(
  url: string,
  bytes: Uint8Array,
): Promise<{ received: string; timedOut: boolean; error?: string }> {
  const connection = await rawConnect(url, '', { allowHalfOpen: true });
  // A server that refuses early may reset the connection while the rest is still being written.
  connection.socket.on('error', () => undefined);
  connection.socket.end(bytes);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ANSWER_WITHIN_MS);
  });
  const closed = await Promise.race([connection.closed, timeout]);
  clearTimeout(timer);
  connection.socket.destroy();
  return closed === 'timeout'
    ? { received: connection.received(), timedOut: true }
    : {
        received: connection.received(),
        timedOut: false,
        ...(closed.error ? { error: closed.error } : {}),
      };
}
