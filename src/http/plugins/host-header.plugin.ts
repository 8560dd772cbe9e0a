import fp from 'fastify-plugin';
import { httpErrors } from '../errors/http-error.js';

/**
 * An HTTP/1.1 request without Host is refused (RFC 9112, section 3.2) with the Error body. Node
 * would refuse it itself with a bare 400 (its requireHostHeader, turned off in ApiServer); HTTP/1.0
 * requests need no Host.
 */
export const hostHeaderPlugin = fp(
  async (app) => {
    app.addHook('onRequest', function requireHost(request, _reply, done) {
      if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
        done(httpErrors.missingHost());
        return;
      }
      done();
    });
  },
  { name: 'host-header', dependencies: ['answer-headers'] },
);
