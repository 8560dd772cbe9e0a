import fp from 'fastify-plugin';
import { parse as parseLossless } from 'lossless-json';
import { httpErrors } from '../errors/http-error.js';

export const BODY_LIMIT_KIB = 16;
export const BODY_LIMIT_BYTES = BODY_LIMIT_KIB * 1024;

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
    throw httpErrors.invalidJson(detail);
  }
}

/** application/json is the only body this API takes; anything else is a 415. */
export const jsonBodyPlugin = fp(
  async (app) => {
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
  },
  { name: 'json-body' },
);
