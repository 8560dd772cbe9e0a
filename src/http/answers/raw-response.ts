import { errorBody } from '../errors/error-table.js';
import type { HttpError } from '../errors/http-error.js';
import { http } from '../server/node-http.js';
import { answerLines, JSON_TYPE } from './response-headers.js';

/**
 * The Error body as a whole HTTP/1.1 response, for a socket that has no ServerResponse to write
 * it (a refusal before any request could be read whole, a tunnel refused): the headers of every
 * answer (response-headers.ts), the rate-limit lines the caller read, then the connection closes.
 */
export function rawErrorResponse(refusal: HttpError, requestId: string, headerLines = ''): string {
  const body = JSON.stringify(errorBody(refusal));
  const { status } = errorBody(refusal);
  return (
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\n` +
    `content-type: ${JSON_TYPE}\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    answerLines(requestId) +
    headerLines +
    `date: ${new Date().toUTCString()}\r\n` +
    'connection: close\r\n\r\n' +
    body
  );
}
