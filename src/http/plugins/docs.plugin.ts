import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';

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

/** The interactive reference at /docs, from the OpenAPI plugin's document. */
export const docsPlugin = fp(
  async (app) => {
    await app.register(swaggerUi, {
      routePrefix: '/docs',
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
      // added by a proxy is kept. /v1/openapi.json keeps PUBLIC_BASE_URL.
      transformSpecification: (document) => ({
        ...document,
        servers: [{ url: '../v1', description: 'This server' }],
      }),
      // Swagger UI's own assets are served from the package, so the page works with no network.
      staticCSP: DOCS_CSP,
    });
  },
  { name: 'docs', dependencies: ['openapi'] },
);
