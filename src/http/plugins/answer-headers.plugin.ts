import fp from 'fastify-plugin';
import { REQUEST_ID_HEADER } from '../answers/response-headers.js';

/**
 * The headers of every answer (answers/response-headers.ts, the one table, as the listener's
 * settings make it) on every Fastify answer of the listener, refusals included: set as the request arrives, so that whatever answers it
 * later carries them.
 */
export const answerHeadersPlugin = fp<{ table: Readonly<Record<string, string>> }>(
  async (app, { table }) => {
    app.addHook('onRequest', function answerHeaders(request, reply, done) {
      void reply.header(REQUEST_ID_HEADER, request.id);
      void reply.headers(table);
      done();
    });
  },
  { name: 'answer-headers' },
);
