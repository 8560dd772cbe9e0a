import { GET_PET_DEPRECATED_AT, GET_PET_SUNSET_HTTP_DATE } from '../../domain/pets/deprecation.js';
import type { Pet } from '../../domain/pets/pet.js';
import type { ListPetsResult, PageQuery } from '../../domain/pets/pet-service.js';
import { apiPath } from '../scopes.js';
import { CachedAnswer } from './cached-answer.js';
import { JSON_TYPE } from './response-headers.js';

/**
 * THE DEFINITION of the 200 answers of listPets and getPet: their bodies and their own headers.
 * The routes (apps/public/pets/) and the fast path (fast-path/) both send what this builds, so a
 * change to either answer is made here once. What is logged and counted for an answer is
 * answer-recorder.ts's; the headers every answer carries are response-headers.ts's.
 */

/** An operation as the routes, the fast path, the metrics and the logs know it. */
export interface PetOperation {
  readonly operationId: string;
  /** Below the API prefix, in Fastify's form. */
  readonly path: string;
  readonly deprecated: boolean;
}

export const LIST_PETS: PetOperation = {
  operationId: 'listPets',
  path: '/pets',
  deprecated: false,
};
export const GET_PET: PetOperation = {
  operationId: 'getPet',
  path: '/pets/:petId',
  deprecated: true,
};

/** RFC 9745's Deprecation, RFC 8594's Sunset and the successor, on every answer of getPet. */
export function deprecationHeaders(publicBaseUrl: string): Readonly<Record<string, string>> {
  return Object.freeze({
    deprecation: `@${Math.floor(GET_PET_DEPRECATED_AT / 1000)}`,
    sunset: GET_PET_SUNSET_HTTP_DATE,
    link: `<${publicBaseUrl}${apiPath('/pets')}>; rel="successor-version"`,
  });
}

/** A body serializer compiled from the response schema of the resource (pet.schema.ts). */
export type Serialize = (value: unknown) => string;

export interface PetSerializers {
  readonly pet: Serialize;
  readonly pets: Serialize;
}

export class PetAnswers {
  readonly #listHeaders: readonly string[] = ['content-type', JSON_TYPE];
  readonly #getHeaders: readonly string[];

  constructor(
    private readonly publicBaseUrl: string,
    private readonly serialize: PetSerializers,
  ) {
    this.#getHeaders = [
      'content-type',
      JSON_TYPE,
      ...Object.entries(deprecationHeaders(publicBaseUrl)).flat(),
    ];
  }

  /** listPets' 200: the page, and a Link to the next one when more pets exist (RFC 8288). */
  page(query: PageQuery, page: ListPetsResult): CachedAnswer {
    const body = this.serialize.pets(page.pets);
    if (page.nextCursor === undefined) return new CachedAnswer(body, this.#listHeaders);
    // The same query with the next page's cursor, in one order whatever the client's: limit, the
    // filters by name, the cursor.
    const next = new URLSearchParams({ limit: String(query.limit) });
    const filters = Object.entries(query).filter(([name]) => name !== 'limit' && name !== 'cursor');
    for (const [name, value] of filters.sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (value !== undefined) next.set(name, String(value));
    }
    next.set('cursor', page.nextCursor);
    const link = `<${this.publicBaseUrl}${apiPath('/pets')}?${next}>; rel="next"`;
    return new CachedAnswer(body, [...this.#listHeaders, 'link', link]);
  }

  /** getPet's 200: the pet, with the operation's deprecation headers. */
  pet(pet: Pet): CachedAnswer {
    return new CachedAnswer(this.serialize.pet(pet), this.#getHeaders);
  }
}
