import type { components, operations } from './generated/openapi.js';

type Schemas = components['schemas'];

/** How int64 fields (`id`, `categoryId`) arrive: numbers (exact up to 2^53-1) or bigints. */
export type Int64Mode = 'number' | 'bigint';
export type Int64<M extends Int64Mode> = M extends 'bigint' ? bigint : number;

export type PetStatus = Schemas['PetStatus'];
/** A pet as the API returns it, with its int64 fields in the client's chosen form. */
export type Pet<M extends Int64Mode = 'number'> = Omit<Schemas['Pet'], 'id' | 'categoryId'> & {
  id: Int64<M>;
  categoryId: Int64<M>;
};
/** What createPet sends; `categoryId` may be a bigint for values above 2^53 in either mode. */
export type NewPet = Omit<Schemas['NewPet'], 'categoryId'> & { categoryId: number | bigint };
export type ErrorBody = Schemas['Error'];
/** Every `code` the API answers errors with. */
export type ErrorCode = ErrorBody['code'];
export type ListPetsQuery = Omit<
  NonNullable<operations['listPets']['parameters']['query']>,
  'cursor'
>;
