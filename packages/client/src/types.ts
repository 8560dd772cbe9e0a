import type { components, operations } from './generated/openapi.js';

/** A pet as the API returns it; with `int64: 'bigint'`, ids and categoryIds are bigints. */
export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
export type ErrorBody = components['schemas']['Error'];
/** Every `code` the API can answer with. */
export type ErrorCode = ErrorBody['code'];
export type ListPetsQuery = NonNullable<operations['listPets']['parameters']['query']>;
