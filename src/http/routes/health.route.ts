import type { FastifyInstance } from 'fastify';
import { BUILD_VERSION } from '../../build-info.js';
import type { Dependency } from '../../domain/ports.js';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../errors/error-handler.js';
import { HttpError, httpErrors } from '../errors/http-error.js';
import { ApiServer } from '../http-server.js';

/** Unauthenticated probes for orchestrators: liveness never touches storage, readiness does. */
export function registerHealth(app: FastifyInstance, dependencies: readonly Dependency[]): void {
  const hidden = { schema: { hide: true } };
  // The build's version, so that `petstore check` can tell which release a deployment runs.
  app.get('/healthz', hidden, async () => ({ status: 'ok', version: BUILD_VERSION }));
  app.get('/readyz', hidden, async (request) => {
    // Stopping: the load balancer takes this instance out while it still serves (the drain).
    if (app.server instanceof ApiServer && app.server.draining) {
      throw new HttpError(
        'unavailable',
        `This instance is draining before it stops; retry after ${UNAVAILABLE_RETRY_AFTER_SECONDS} seconds on another instance`,
        { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
      );
    }
    const answers = await Promise.allSettled(dependencies.map((d) => d.ping()));
    const down = dependencies.find((_, i) => answers[i]?.status === 'rejected');
    if (down !== undefined) {
      const failure = answers[dependencies.indexOf(down)] as PromiseRejectedResult;
      request.log.warn({ err: failure.reason, dependency: down.name }, 'readiness check failed');
      throw httpErrors.unavailable(down.name, UNAVAILABLE_RETRY_AFTER_SECONDS);
    }
    return { status: 'ready', ...Object.fromEntries(dependencies.map((d) => [d.name, d.backend])) };
  });
}
