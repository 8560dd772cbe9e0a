import type { FastifyInstance } from 'fastify';
import { parse as parseLossless } from 'lossless-json';
import { HttpError } from './errors.js';

export const BODY_LIMIT_BYTES = 16 * 1024;

/** Integers beyond 2^53 become bigint so int64 fields keep every digit; other numbers stay numbers. */
function parseNumber(text: string): number | bigint {
  if (/^-?\d+$/.test(text)) {
    const value = Number(text);
    return Number.isSafeInteger(value) ? value : BigInt(text);
  }
  return Number(text);
}

/** Parses JSON request bodies without rounding large integers. */
export function parseJsonBody(text: string): unknown {
  try {
    // JSON.parse is several times faster; only a run of 16+ digits can hold an unsafe integer.
    return /\d{16}/.test(text) ? parseLossless(text, null, parseNumber) : JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message.replace(/\s+/g, ' ') : 'invalid JSON';
    throw new HttpError('invalid_json', `Request body is not valid JSON: ${detail}`);
  }
}

export function registerJsonBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES },
    (_request, body, done) => {
      try {
        done(null, parseJsonBody(body as string));
      } catch (error) {
        done(error as Error, undefined);
      }
    },
  );
}
