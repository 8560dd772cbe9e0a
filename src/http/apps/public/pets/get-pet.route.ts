import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { StoreCache } from '../../../../domain/cache/store-cache.js';
import type { Clock } from '../../../../domain/clock.js';
import {
  GET_PET_SUNSET_HTTP_DATE,
  getPetGone,
  isGetPetGone,
} from '../../../../domain/pets/deprecation.js';
import { INT64_MAX } from '../../../../domain/pets/pet.js';
import type { PetService } from '../../../../domain/pets/pet-service.js';
import type { CachedAnswer } from '../../../answers/cached-answer.js';
import { deprecationHeaders, GET_PET, type PetAnswers } from '../../../answers/pet-answers.js';
import { httpErrors } from '../../../errors/http-error.js';
import {
  CONTENT_ENCODING_HEADER,
  errorResponses,
  jsonResponse,
  notModifiedResponse,
  REVALIDATION_HEADERS,
  scopeSecurity,
} from '../../../openapi/openapi-responses.js';
import { problems } from '../../../validation/validator-compiler.js';
import { sendAnswer } from '../../reply-answer.js';
import { ConditionalHeadersSchema, PetIdParamsSchema, PetSchema } from './pet.schema.js';

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

export function registerGetPet(
  app: FastifyInstance,
  pets: PetService,
  clock: Clock,
  answers: PetAnswers,
  cache: StoreCache<CachedAnswer>,
  publicBaseUrl: string,
): void {
  const headers = deprecationHeaders(publicBaseUrl);
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    GET_PET.path,
    {
      schema: {
        operationId: GET_PET.operationId,
        security: scopeSecurity(GET_PET.operationId),
        summary: 'Get a pet (deprecated)',
        description: `Deprecated: removed on ${GET_PET_SUNSET_HTTP_DATE}; from then on it answers 410. Use GET /pets with a status filter instead.`,
        deprecated: GET_PET.deprecated,
        tags: ['Pets'],
        params: PetIdParamsSchema,
        headers: ConditionalHeadersSchema,
        response: {
          200: jsonResponse('The pet.', Type.Ref(PetSchema), {
            ...DEPRECATION_HEADERS,
            ...REVALIDATION_HEADERS,
            ...CONTENT_ENCODING_HEADER,
          }),
          304: notModifiedResponse(DEPRECATION_HEADERS),
          ...errorResponses(
            ['invalid_parameter', 'unauthorized', 'insufficient_scope', 'not_found', 'gone'],
            {
              invalid_parameter: httpErrors.invalidParameter(
                problems.integerRange('petId', 1n, INT64_MAX),
              ),
            },
          ),
        },
      },
      // Every answer of the operation, its refusals included, carries the deprecation headers
      // (the 200's definition has them too). Both hooks take a callback rather than being async:
      // no promise per request.
      onSend: function markDeprecated(_request, reply, payload, done) {
        void reply.headers(headers);
        done(null, payload);
      },
      // Before validation, so that after the sunset every call, valid id or not, learns it is gone.
      preValidation: function refuseAfterSunset(_request, _reply, done) {
        if (isGetPetGone(clock.now())) done(getPetGone());
        else done();
      },
    },
    async (request, reply) => {
      const { petId } = request.params;
      const answer = await cache.pet(petId, async () => answers.pet(await pets.get(petId)));
      return sendAnswer(request, reply, answer);
    },
  );
}
