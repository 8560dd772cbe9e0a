import type { FastifyInstance } from 'fastify';
import type { Storage } from '../../domain/ports.js';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../errors/error-handler.js';
import { httpErrors } from '../errors/http-error.js';

/** Unauthenticated probes for orchestrators: liveness never touches storage, readiness does. */
export function registerHealth(app: FastifyInstance, storage: Storage): void {
  const hidden = { schema: { hide: true } };
  app.get('/healthz', hidden, async () => ({ status: 'ok' }));
  app.get('/readyz', hidden, async (request) => {
    try {
      await storage.ping();
      return { status: 'ready', database: storage.backend };
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed');
      throw httpErrors.unavailable('database', UNAVAILABLE_RETRY_AFTER_SECONDS);
    }
  });
}
