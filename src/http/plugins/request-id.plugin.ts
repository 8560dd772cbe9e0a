import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import fp from 'fastify-plugin';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const assigned = new WeakMap<IncomingMessage, string>();

/**
 * Keeps a caller's X-Request-Id when it is a plain token, so logs join across services. The same
 * request always gets the same id: Fastify asks first, and a refusal written straight to the socket
 * (src/http/http-server.ts) asks again for a request whose body never arrived.
 */
export function genRequestId(request: IncomingMessage): string {
  const known = assigned.get(request);
  if (known !== undefined) return known;
  const given = request.headers['x-request-id'];
  const id = typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
  assigned.set(request, id);
  return id;
}

/** Echoes the request id on every response (Fastify's genReqId option makes it). */
export const requestIdPlugin = fp(
  async (app) => {
    app.addHook('onRequest', (request, reply, done) => {
      void reply.header('x-request-id', request.id);
      done();
    });
  },
  { name: 'request-id' },
);
