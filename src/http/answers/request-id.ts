import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { API_KEY_SEARCH } from '../../domain/api-keys/key-format.js';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const assigned = new WeakMap<IncomingMessage, string>();

/**
 * Keeps a caller's X-Request-Id when it is a plain token (and not an API key), so logs join across
 * services. The same request always gets the same id: Fastify asks first, and a refusal written
 * straight to the socket (src/http/server/api-server.ts) asks again for a request whose body never
 * arrived.
 */
export function genRequestId(request: IncomingMessage): string {
  const known = assigned.get(request);
  if (known !== undefined) return known;
  const id = requestIdFor(request);
  assigned.set(request, id);
  return id;
}

/**
 * The id of a request answered at once, which nothing asks again (the fast path): genRequestId's
 * choice, not remembered.
 */
export function requestIdFor(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  // The id is on every log line of the request, where nothing masks it: never a key, which a
  // client can send here by mistake (a key is a sane token).
  return typeof given === 'string' &&
    SANE_REQUEST_ID.test(given) &&
    given.search(API_KEY_SEARCH) < 0
    ? given
    : randomUUID();
}
