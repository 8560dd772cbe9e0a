import type { FastifyInstance } from 'fastify';
import type { StoreCache } from '../../../domain/cache/store-cache.js';
import type { Clock } from '../../../domain/clock.js';
import type { PetService } from '../../../domain/pets/pet-service.js';
import type { CachedAnswer } from '../../answers/cached-answer.js';
import type { PetAnswers } from '../../answers/pet-answers.js';
import { refuseOtherMethods } from '../../methods.js';
import { noRouteFor, refuseUnrouted } from '../../not-found.js';
import type { Guard } from './api-key-guard.js';
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
  /** The cached answers of pets and of full pages below the id horizon. */
  cache: StoreCache<CachedAnswer>;
  /** The one definition of listPets' and getPet's 200, shared with the fast path. */
  answers: PetAnswers;
}

/**
 * The /v1 operations. Every request under /v1, known path or not, is authenticated and counted
 * against its rate limits before anything else happens to it.
 */
export async function v1Routes(app: FastifyInstance, deps: V1Dependencies): Promise<void> {
  app.addHook('onRequest', deps.guard);
  // No operation at the path: 404 once authenticated, before the body is read.
  app.addHook('onRequest', refuseUnrouted());

  registerListPets(app, deps.pets, deps.answers, deps.cache);
  registerCreatePet(app, deps.pets);
  registerGetPet(app, deps.pets, deps.clock, deps.answers, deps.cache, deps.publicBaseUrl);
  // With CORS on, OPTIONS belongs to the preflight handler.
  const keepOptions = deps.corsEnabled;
  refuseOtherMethods(app, '/pets', ['GET', 'HEAD', 'POST'], { keepOptions });
  refuseOtherMethods(app, '/pets/:petId', ['GET', 'HEAD'], { keepOptions });

  app.setNotFoundHandler(async (request) => {
    throw noRouteFor(request);
  });
}
