import helmet from '@fastify/helmet';
import swaggerUi, { type FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { handleError } from '../../errors/error-handler.js';
import { HttpError } from '../../errors/http-error.js';
import { noRouteFor } from '../../not-found.js';
import { API_SCOPE, OPERATIONS_ENDPOINTS } from '../../scopes.js';

/**
 * Content-Security-Policy of the docs page and its assets: everything from this server, nothing
 * from anywhere else. connect-src 'self' lets "Try it out" call this server. Unlike
 * @fastify/swagger-ui's built-in policy (staticCSP: true) it allows no https: fonts and styles and
 * no validator.swagger.io badge, and does not upgrade requests to https, which would break the page
 * where the service is reached over plain http.
 */
const DOCS_CSP: Record<string, string[]> = {
  'default-src': ["'self'"],
  'base-uri': ["'self'"],
  'connect-src': ["'self'"],
  'font-src': ["'self'", 'data:'],
  'form-action': ["'self'"],
  'frame-ancestors': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'object-src': ["'none'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'"],
};

const DOCS_OPTIONS: FastifySwaggerUiOptions = {
  routePrefix: OPERATIONS_ENDPOINTS.docs,
  uiConfig: {
    // Without Swagger's top bar: its logo is an SVG with an inline <style> that the policy below
    // refuses, and its box for loading another document could only reach this server anyway.
    layout: 'BaseLayout',
    deepLinking: true,
    displayOperationId: true,
    displayRequestDuration: true,
    tryItOutEnabled: true,
    persistAuthorization: true,
    validatorUrl: null,
  },
  theme: { title: 'Pet Adoption Service API' },
  // "Try it out" calls the server that served the page, whatever address the browser used
  // (PUBLIC_BASE_URL may name another, e.g. 127.0.0.1 for HOST=0.0.0.0, and connect-src 'self'
  // would refuse it). Relative to the page's document at <prefix>/docs/json, so a path prefix
  // added by a proxy is kept. The API's own document keeps PUBLIC_BASE_URL.
  transformSpecification: (document) => ({
    ...document,
    servers: [{ url: `..${API_SCOPE.prefix}`, description: 'This server' }],
  }),
  // Swagger UI's own assets are served from the package, so the page works with no network.
  staticCSP: DOCS_CSP,
};

/** The interactive reference at /docs, from the OpenAPI plugin's document. */
export const docsPlugin = fp(
  async (app) => {
    // Its own scope, so the error handler below applies to the docs routes only.
    await app.register(async (docs) => {
      docs.setErrorHandler(answerStaticRefusal);
      // A web page's browser headers, for these routes only; the CSP is the one below.
      await docs.register(helmet, { contentSecurityPolicy: false });
      await docs.register(swaggerUi, DOCS_OPTIONS);
    });
  },
  { name: 'docs', dependencies: ['openapi'] },
);

/**
 * The static files under /docs/static refuse a path that climbs out of their folder with 403 (from
 * `send`, through @fastify/static). Every such refusal is a 404 not_found, the answer for a file that
 * is not there: the reply does not tell what exists outside the folder or among dotfiles.
 */
function answerStaticRefusal(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const status = error.statusCode ?? 500;
  const refused = !(error instanceof HttpError) && status >= 400 && status < 500;
  handleError(refused ? noRouteFor(request) : error, request, reply);
}
