import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { PAGE_SIZE } from '../../../domain/pets/pet.js';
import type { PetService } from '../../../domain/pets/pet-service.js';
import type { StoreCopies } from '../../../domain/pets/store-copies.js';
import { errorResponses, jsonResponse } from '../../openapi-responses.js';
import { sendCached, serialize } from '../../response-cache.js';
import { apiPath } from '../../scopes.js';
import { ListPetsQuerySchema, PetsSchema } from './pet.schema.js';

/** What the route is known by: metrics, logs and the copies answered without Fastify. */
export const LIST_PETS = { operationId: 'listPets', path: '/pets' } as const;

export function registerListPets(
  app: FastifyInstance,
  pets: PetService,
  publicBaseUrl: string,
  copies: StoreCopies,
): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    LIST_PETS.path,
    {
      schema: {
        operationId: LIST_PETS.operationId,
        summary: 'List pets',
        description:
          'Pets ordered by id ascending, optionally filtered by status. When more pets exist, a `Link: <...>; rel="next"` header gives the URL of the next page.',
        tags: ['Pets'],
        querystring: ListPetsQuerySchema,
        response: {
          200: jsonResponse('A page of pets.', Type.Ref(PetsSchema), {
            Link: {
              description:
                'RFC 8288 link to the next page (rel="next"), present only when more pets exist.',
              schema: { type: 'string' },
            },
          }),
          ...errorResponses(['invalid_parameter', 'unauthorized']),
        },
      },
    },
    async (request, reply) => {
      // The validator fills in the default; the fallback only satisfies the type.
      const { limit = PAGE_SIZE.default, status, cursor } = request.query;
      const query = {
        limit,
        ...(status ? { status } : {}),
        ...(cursor !== undefined ? { cursor } : {}),
      };
      const answer = await copies.page(query, async () => {
        const page = await pets.list(query);
        let link: string | undefined;
        if (page.nextCursor !== undefined) {
          const next = new URLSearchParams({ limit: String(limit) });
          if (status) next.set('status', status);
          next.set('cursor', page.nextCursor);
          link = `<${publicBaseUrl}${apiPath('/pets')}?${next}>; rel="next"`;
        }
        const copy = { body: serialize(reply, page.pets), ...(link ? { link } : {}) };
        return { copy, final: page.final };
      });
      return sendCached(reply, answer);
    },
  );
}
