import type { FastifyInstance } from 'fastify';
import type { Storage } from '../../domain/ports.js';
import { sendError } from '../errors.js';

/** Unauthenticated probes for orchestrators: liveness never touches storage, readiness does. */
export function registerHealth(app: FastifyInstance, storage: Storage): void {
  const hidden = { schema: { hide: true } };
  app.get('/healthz', hidden, async () => ({ status: 'ok' }));
  app.get('/readyz', hidden, async (request, reply) => {
    try {
      await storage.ping();
      return { status: 'ready', database: storage.backend };
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed');
      return sendError(reply, 'service_unavailable', 'The database does not answer; retry shortly');
    }
  });
}
