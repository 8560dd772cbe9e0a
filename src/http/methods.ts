import type { FastifyInstance } from 'fastify';
import { httpErrors } from './errors/http-error.js';
import { http } from './server/node-http.js';

/**
 * Lets the router see every method Node's parser accepts (TRACE, SEARCH, QUERY, PROPFIND, ...),
 * so that a path can answer 405 to each one it does not serve instead of 404 or 400. CONNECT
 * opens a tunnel and never reaches the router. Call once on the root instance, before routes.
 */
export function routeEveryMethod(app: FastifyInstance): void {
  for (const method of http.METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method);
  }
}

/**
 * Answers 405 with Allow to every method `url` does not serve. The refusal comes in onRequest,
 * after the instance's own onRequest hooks (authentication under /v1) and before any body is
 * read, so a refused PUT is a 405 whatever its Content-Type.
 */
export function refuseOtherMethods(
  app: FastifyInstance,
  url: string,
  allowed: readonly string[],
  options: { keepOptions?: boolean } = {},
): void {
  const refused = app.supportedMethods.filter(
    (method) => !allowed.includes(method) && !(options.keepOptions && method === 'OPTIONS'),
  );
  app.route({
    method: refused,
    url,
    schema: { hide: true },
    onRequest: async (request) => {
      throw httpErrors.methodNotAllowed(request.method, allowed);
    },
    handler: async () => undefined,
  });
}
