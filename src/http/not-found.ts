import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { type HttpError, httpErrors } from './errors/http-error.js';
import { API_SCOPE, isUnder } from './scopes.js';

/** The 404 for a request no route serves: its method and path, never its query. */
export function noRouteFor(request: FastifyRequest): HttpError {
  const path = request.url.split('?')[0] ?? '';
  return httpErrors.noRoute(request.method, path, isUnder(API_SCOPE, path));
}

/**
 * An onRequest hook answering 404 for a path no route of its scope serves, before the body is
 * read: Fastify parses a body before its not-found handler runs, so a body no path takes would
 * turn the 404 into a 400. `leave` names requests a child scope refuses itself, later (the API scope,
 * after authentication).
 */
export function refuseUnrouted(leave?: (url: string) => boolean): onRequestHookHandler {
  return function refuseUnrouted(request, _reply, done) {
    if (request.is404 && leave?.(request.url) !== true) done(noRouteFor(request));
    else done();
  };
}
