import fp from 'fastify-plugin';

/**
 * One line per request, at debug level: with LOG_LEVEL=info (the default) a request costs no log
 * line unless it fails (5xx, at error) or bans a key (warn), so logging stays off the hot path.
 * Registered only when the logger would print it.
 */
export const accessLogPlugin = fp(
  async (app) => {
    if (app.log.level !== 'debug' && app.log.level !== 'trace') return;
    app.addHook('onRequest', (request, _reply, done) => {
      request.log.debug({ req: request }, 'incoming request');
      done();
    });
    app.addHook('onResponse', (request, reply, done) => {
      request.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
      done();
    });
  },
  { name: 'access-log' },
);
