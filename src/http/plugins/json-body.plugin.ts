import fp from 'fastify-plugin';
import { httpErrors } from '../errors/http-error.js';
import { JsonSyntaxError, parseStrictJson } from '../strict-json.js';

export const BODY_LIMIT_KIB = 16;
export const BODY_LIMIT_BYTES = BODY_LIMIT_KIB * 1024;

/** The body as JSON, parsed by the one strict parser (src/http/strict-json.ts). */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw httpErrors.emptyJson();
  try {
    return parseStrictJson(text);
  } catch (error) {
    // Anything else is our bug: the error handler answers 500 without showing it.
    if (error instanceof JsonSyntaxError) throw httpErrors.invalidJson(error.message);
    throw error;
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
