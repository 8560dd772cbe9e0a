import fp from 'fastify-plugin';
import { loggableUrl } from '../log-options.js';
import { routeTemplate } from '../route-template.js';

export interface AccessLogOptions {
  /** LOG_SAMPLE_SUCCESS: the share of 2xx/3xx lines written; 4xx and 5xx are always written. */
  readonly sampleSuccess: number;
  /** Draws the sample; Math.random unless a test fixes it. */
  readonly random?: () => number;
}

const QUIET = new Set(['fatal', 'error', 'warn', 'silent']);

/**
 * One line per request at info, once answered: method, route template, status, duration and the
 * key's id, with the request id and trace id the request's logger carries. Never the URL of a
 * matched route (its template says what it is); for an unmatched one, the URL as loggableUrl
 * keeps it, without query values other than the interface's. At debug, a line on arrival too.
 * Registered only when the logger would print the lines.
 */
export const accessLogPlugin = fp<AccessLogOptions>(
  async (app, options) => {
    const level = app.log.level;
    if (level === 'debug' || level === 'trace') {
      app.addHook('onRequest', (request, _reply, done) => {
        request.log.debug({ req: request }, 'incoming request');
        done();
      });
    }
    if (QUIET.has(level)) return;
    const { sampleSuccess } = options;
    const random = options.random ?? Math.random;
    app.addHook('onResponse', (request, reply, done) => {
      const status = reply.statusCode;
      if (status < 400 && sampleSuccess < 1 && random() >= sampleSuccess) return done();
      const route = routeTemplate(request);
      request.log.info(
        {
          method: request.method,
          ...(route === undefined ? { url: loggableUrl(request.url) } : { route }),
          status,
          durationMs: Math.round(reply.elapsedTime * 10) / 10,
          ...(request.apiKey === undefined ? {} : { keyId: request.apiKey.id }),
        },
        'request completed',
      );
      done();
    });
  },
  { name: 'access-log' },
);
