import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { framingRefusal } from '../request-framing.js';

export interface HostHeaderOptions {
  /**
   * Runs before a refusal is answered, to draw it from the client's budget and put the rate-limit
   * headers on it, as every other answer of the listener has; may throw the 429 to answer instead.
   */
  beforeRefusal?: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
}

/**
 * A request refused for its target or framing (request-framing.ts): without Host in HTTP/1.1 (RFC
 * 9112, section 3.2), with two, an absolute-form target, HTTP/0.9, a Transfer-Encoding other than
 * chunked. Answered 400 with the Error body; Node would refuse a missing Host itself with a bare
 * 400 (its requireHostHeader, turned off in ApiServer) and serve the others.
 */
export const hostHeaderPlugin = fp<HostHeaderOptions>(
  async (app, options) => {
    app.addHook('onRequest', function refuseBadFraming(request, reply, done) {
      const refusal = framingRefusal(request.raw);
      if (refusal === undefined) return done();
      if (options.beforeRefusal === undefined) return done(refusal);
      options.beforeRefusal(request, reply).then(
        () => done(refusal),
        (instead: Error) => done(instead),
      );
    });
  },
  { name: 'host-header', dependencies: ['answer-headers'] },
);
