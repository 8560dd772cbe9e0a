import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { StoreCache } from '../../../../domain/cache/store-cache.js';
import { PAGE_SIZE } from '../../../../domain/pets/pet.js';
import type { PetService } from '../../../../domain/pets/pet-service.js';
import type { CachedAnswer } from '../../../answers/cached-answer.js';
import { LIST_PETS, type PetAnswers } from '../../../answers/pet-answers.js';
import {
  CONTENT_ENCODING_HEADER,
  errorResponses,
  jsonResponse,
  notModifiedResponse,
  REVALIDATION_HEADERS,
  scopeSecurity,
} from '../../../openapi/openapi-responses.js';
import { sendAnswer } from '../../reply-answer.js';
import { ConditionalHeadersSchema, ListPetsQuerySchema, PetsSchema } from './pet.schema.js';

export function registerListPets(
  app: FastifyInstance,
  pets: PetService,
  answers: PetAnswers,
  cache: StoreCache<CachedAnswer>,
): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    LIST_PETS.path,
    {
      schema: {
        operationId: LIST_PETS.operationId,
        security: scopeSecurity(LIST_PETS.operationId),
        summary: 'List pets',
        description:
          'Pets ordered by id ascending, optionally filtered by status. When more pets exist, a `Link: <...>; rel="next"` header gives the URL of the next page.',
        tags: ['Pets'],
        querystring: ListPetsQuerySchema,
        headers: ConditionalHeadersSchema,
        response: {
          200: jsonResponse('A page of pets.', Type.Ref(PetsSchema), {
            Link: {
              description:
                'RFC 8288 link to the next page (rel="next"), present only when more pets exist.',
              schema: { type: 'string' },
            },
            ...REVALIDATION_HEADERS,
            ...CONTENT_ENCODING_HEADER,
          }),
          304: notModifiedResponse(),
          ...errorResponses(['invalid_parameter', 'unauthorized', 'insufficient_scope']),
        },
      },
    },
    async (request, reply) => {
      // The validated query is the page query (the validator fills in the default limit; the
      // fallback only satisfies the type).
      const query = { ...request.query, limit: request.query.limit ?? PAGE_SIZE.default };
      const answer = await cache.page(query, async () => {
        const page = await pets.list(query);
        return { value: answers.page(query, page), final: page.final };
      });
      return sendAnswer(request, reply, answer);
    },
  );
}
