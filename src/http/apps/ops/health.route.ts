import type { FastifyInstance } from 'fastify';
import { BUILD_COMMIT, BUILD_VERSION } from '../../../build-info.js';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../errors/error-handler.js';
import { HttpError, httpErrors } from '../../errors/http-error.js';
import type { Readiness } from './readiness.js';
import { OPERATIONS_ENDPOINTS } from '../../scopes.js';

/** The build as the operations listener reports it (its /healthz and /version). */
export function buildDetails(): { version: string; commit: string; node: string } {
  return { version: BUILD_VERSION, commit: BUILD_COMMIT, node: process.version };
}

/**
 * Unauthenticated probes for orchestrators: liveness never touches storage, readiness does.
 * `details` (the operations listener) adds the commit and Node.js version to /healthz; the public
 * one says only the version.
 */
export function registerHealth(
  app: FastifyInstance,
  readiness: Readiness,
  options: { details?: boolean } = {},
): void {
  const hidden = { schema: { hide: true } };
  // The build's version, so that `petstore check` can tell which release a deployment runs.
  const health = options.details
    ? { status: 'ok', ...buildDetails() }
    : { status: 'ok', version: BUILD_VERSION };
  app.get(OPERATIONS_ENDPOINTS.health, hidden, async () => health);
  app.get(OPERATIONS_ENDPOINTS.ready, hidden, async (request) => {
    const answer = await readiness.check();
    if (answer.ready) return { status: 'ready', ...answer.backends };
    if (answer.draining) {
      throw new HttpError(
        'unavailable',
        `This instance is draining before it stops; retry after ${UNAVAILABLE_RETRY_AFTER_SECONDS} seconds on another instance`,
        { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
      );
    }
    const { down, reason } = answer;
    request.log.warn({ err: reason, dependency: down.name }, 'readiness check failed');
    throw httpErrors.unavailable(down.name, UNAVAILABLE_RETRY_AFTER_SECONDS);
  });
}
