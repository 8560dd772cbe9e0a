import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../domain/clock.js';
import type { PetService } from '../../domain/pets/pet-service.js';
import type { Guard } from '../api-key-guard.js';
import { httpErrors } from '../errors/http-error.js';
import { registerCreatePet } from './pets/create-pet.route.js';
import { registerGetPet } from './pets/get-pet.route.js';
import { registerListPets } from './pets/list-pets.route.js';

export interface V1Dependencies {
  /** Authenticates and counts a request; throws the 401 or 429 to answer. */
  guard: Guard;
  pets: PetService;
  clock: Clock;
  publicBaseUrl: string;
  /** With CORS on, OPTIONS belongs to the preflight handler and is not refused here. */
  corsEnabled: boolean;
}

/**
 * The /v1 operations. Every request under /v1, known path or not, is authenticated and counted
 * against its rate limits before anything else happens to it.
 */
export async function v1Routes(app: FastifyInstance, deps: V1Dependencies): Promise<void> {
  app.addHook('onRequest', deps.guard);

  registerListPets(app, deps.pets, deps.publicBaseUrl);
  registerCreatePet(app, deps.pets);
  registerGetPet(app, deps.pets, deps.clock, deps.publicBaseUrl);
  refuseOtherMethods(app, '/pets', ['GET', 'HEAD', 'POST'], deps.corsEnabled);
  refuseOtherMethods(app, '/pets/:petId', ['GET', 'HEAD'], deps.corsEnabled);

  app.setNotFoundHandler(async (request) => {
    throw httpErrors.noRoute(request.method, request.url.split('?')[0] ?? '');
  });
}

function refuseOtherMethods(
  app: FastifyInstance,
  url: string,
  allowed: readonly string[],
  corsEnabled: boolean,
): void {
  const refused = ['DELETE', 'PATCH', 'PUT', 'OPTIONS', 'GET', 'POST'].filter(
    (method) => !allowed.includes(method) && !(corsEnabled && method === 'OPTIONS'),
  );
  app.route({
    method: refused,
    url,
    schema: { hide: true },
    handler: async (request) => {
      throw httpErrors.methodNotAllowed(request.method, allowed);
    },
  });
}
