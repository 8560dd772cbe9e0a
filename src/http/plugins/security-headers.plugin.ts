import helmet from '@fastify/helmet';
import fp from 'fastify-plugin';

/**
 * What a JSON API needs on every response (OWASP REST Security): no content sniffing, HTTPS only
 * once a browser has seen it over TLS, and a policy under which a response opened as a page can
 * load nothing and be framed by no one. The browser headers of a web page (helmet's full set) go
 * on the HTML and assets of /docs only: see helmetForPages.
 */
export const API_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
});
const NAMES = Object.keys(API_HEADERS);

export const securityHeadersPlugin = fp(
  async (app) => {
    app.addHook('onRequest', (_request, reply, done) => {
      for (const name of NAMES) void reply.header(name, API_HEADERS[name]);
      done();
    });
  },
  { name: 'security-headers' },
);

/** helmet's browser headers, registered inside the scope of the pages that need them (/docs). */
export const helmetForPages = helmet;
