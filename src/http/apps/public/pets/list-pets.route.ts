import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { PAGE_SIZE } from '../../../../domain/pets/pet.js';
import type { ListPetsResult, PetService } from '../../../../domain/pets/pet-service.js';
import type { KeptCopy, PageQuery, StoreCopies } from '../../../../domain/pets/store-copies.js';
import { errorResponses, jsonResponse } from '../../../openapi/openapi-responses.js';
import { sendCached, type Serializer, serializerOf } from '../../../answers/cached-answer.js';
import { apiPath } from '../../../scopes.js';
import { ListPetsQuerySchema, PetsSchema } from './pet.schema.js';

/** What the route is known by: metrics, logs and the copies answered without Fastify. */
export const LIST_PETS = { operationId: 'listPets', path: '/pets' } as const;

/**
 * How a page of the listing becomes the copy that is sent (and kept when final): the body by the
 * route's own 200 serializer, and the Link to the next page. The path before Fastify
 * (src/http/fast-path/fast-path.ts) builds uncached pages here too, for the same bytes; it has no reply to
 * take the serializer from, so it uses the one the route took, and leaves uncached pages to
 * the route until the route has answered one.
 */
export class PageAnswers {
  #serialize: Serializer | undefined;

  constructor(private readonly publicBaseUrl: string) {}

  /** The copy of a page the route answers; the route's serializer is kept for answerNow. */
  fromRoute(reply: FastifyReply, query: PageQuery, page: ListPetsResult): KeptCopy {
    this.#serialize ??= serializerOf(reply);
    return this.copyOf(this.#serialize, query, page);
  }

  /** Whether answerNow can serialize: the route answered a page already. */
  get ready(): boolean {
    return this.#serialize !== undefined;
  }

  /** The copy of a page read before Fastify; undefined until the route answered one. */
  answerNow(query: PageQuery, page: ListPetsResult): KeptCopy | undefined {
    return this.#serialize && this.copyOf(this.#serialize, query, page);
  }

  private copyOf(serialize: Serializer, query: PageQuery, page: ListPetsResult): KeptCopy {
    const body = serialize(page.pets);
    if (page.nextCursor === undefined) return { body };
    const next = new URLSearchParams({ limit: String(query.limit) });
    if (query.status) next.set('status', query.status);
    next.set('cursor', page.nextCursor);
    return { body, link: `<${this.publicBaseUrl}${apiPath('/pets')}?${next}>; rel="next"` };
  }
}

export function registerListPets(
  app: FastifyInstance,
  pets: PetService,
  answers: PageAnswers,
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
        return { copy: answers.fromRoute(reply, query, page), final: page.final };
      });
      return sendCached(reply, answer);
    },
  );
}
