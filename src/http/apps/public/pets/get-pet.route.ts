import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../../../domain/clock.js';
import {
  GET_PET_DEPRECATED_AT,
  GET_PET_SUNSET_HTTP_DATE,
  getPetGone,
  isGetPetGone,
} from '../../../../domain/pets/deprecation.js';
import { INT64_MAX } from '../../../../domain/pets/pet.js';
import type { PetService } from '../../../../domain/pets/pet-service.js';
import type { StoreCopies } from '../../../../domain/pets/store-copies.js';
import { httpErrors } from '../../../errors/http-error.js';
import { errorResponses, jsonResponse } from '../../../openapi/openapi-responses.js';
import { sendCached, serialize } from '../../../answers/cached-answer.js';
import { apiPath } from '../../../scopes.js';
import { problems } from '../../../validation/validator-compiler.js';
import { PetIdParamsSchema, PetSchema } from './pet.schema.js';

const DEPRECATION_HEADERS = {
  Deprecation: {
    description: 'RFC 9745: when this operation was deprecated (@<unix seconds>).',
    schema: { type: 'string' },
  },
  Sunset: {
    description: `RFC 8594: removal date, ${GET_PET_SUNSET_HTTP_DATE}.`,
    schema: { type: 'string' },
  },
  Link: {
    description: 'The replacement: GET /pets with a status filter (rel="successor-version").',
    schema: { type: 'string' },
  },
};

/** What the route is known by: metrics, logs and the copies answered without Fastify. */
export const GET_PET = { operationId: 'getPet', path: '/pets/:petId' } as const;

/** RFC 9745's Deprecation, RFC 8594's Sunset and the successor, on every answer of getPet. */
export function deprecationHeaders(publicBaseUrl: string): Readonly<Record<string, string>> {
  return Object.freeze({
    deprecation: `@${Math.floor(GET_PET_DEPRECATED_AT / 1000)}`,
    sunset: GET_PET_SUNSET_HTTP_DATE,
    link: `<${publicBaseUrl}${apiPath('/pets')}>; rel="successor-version"`,
  });
}

export function registerGetPet(
  app: FastifyInstance,
  pets: PetService,
  clock: Clock,
  publicBaseUrl: string,
  copies: StoreCopies,
): void {
  const headers = deprecationHeaders(publicBaseUrl);
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    GET_PET.path,
    {
      schema: {
        operationId: GET_PET.operationId,
        summary: 'Get a pet (deprecated)',
        description: `Deprecated: removed on ${GET_PET_SUNSET_HTTP_DATE}; from then on it answers 410. Use GET /pets with a status filter instead.`,
        deprecated: true,
        tags: ['Pets'],
        params: PetIdParamsSchema,
        response: {
          200: jsonResponse('The pet.', Type.Ref(PetSchema), DEPRECATION_HEADERS),
          ...errorResponses(['invalid_parameter', 'unauthorized', 'not_found', 'gone'], {
            invalid_parameter: httpErrors.invalidParameter(
              problems.integerRange('petId', 1n, INT64_MAX),
            ),
          }),
        },
      },
      // onSend sees every answer of this route, the 401s of authentication included. Both hooks
      // take a callback rather than being async: no promise per request on the hot path.
      onSend: (_request, reply, payload, done) => {
        void reply.headers(headers);
        done(null, payload);
      },
      // Before validation, so that after the sunset every call, valid id or not, learns it is gone.
      preValidation: (_request, _reply, done) => {
        if (isGetPetGone(clock.now())) done(getPetGone());
        else done();
      },
    },
    async (request, reply) => {
      const { petId } = request.params;
      const answer = await copies.pet(petId, async () => ({
        body: serialize(reply, await pets.get(petId)),
      }));
      return sendCached(reply, answer);
    },
  );
}
