import { Type } from '@sinclair/typebox';
import fastJson from 'fast-json-stringify';
import { describeDuration } from '../../../../config/durations.js';
import { IDEMPOTENCY_RETENTION_MS } from '../../../../domain/pets/pet-service.js';
import type { PetSerializers } from '../../../answers/pet-answers.js';
import { NAME_MAX_CODE_POINTS, PAGE_SIZE, PET_STATUSES } from '../../../../domain/pets/pet.js';

/**
 * The one description of the pet resource: request validation (src/http/validation/validator-compiler.ts),
 * the handlers' types (through the TypeBox type provider) and the OpenAPI document all read these
 * schemas.
 */

/** int64 on the wire. Validated exactly (not through a double) and typed as bigint once parsed. */
export const Int64 = (options: { description: string; minimum?: number; examples?: number[] }) =>
  Type.Unsafe<bigint>({ type: 'integer', format: 'int64', ...options });

/**
 * Examples for the OpenAPI document and the /docs page. They are annotations: the validator
 * (src/http/validation/validator-compiler.ts) and the serializer ignore them, and test/http/openapi.test.ts checks
 * that each one is valid. Small integers only: a JavaScript number cannot carry every int64.
 */
const REX = { id: 1, name: 'Rex', categoryId: 3, status: 'available' } as const;
const MIA = { id: 2, name: 'Mia', categoryId: 5 } as const;

export const PetStatusSchema = Type.Unsafe<(typeof PET_STATUSES)[number]>({
  $id: 'PetStatus',
  type: 'string',
  enum: [...PET_STATUSES],
  description: 'Availability status.',
  examples: ['available'],
});

/** C0 controls and DEL: never part of a name. (Regex escapes, so the document stays ASCII.) */
const CONTROL = '\\u0000-\\u001F\\u007F';
/** What String.prototype.trim removes, beyond the controls: a name of only these is blank. */
const BLANK = ' \\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000\\uFEFF';

const name = Type.String({
  minLength: 1,
  maxLength: NAME_MAX_CODE_POINTS,
  // Not blank, no controls, in the portable regex subset JSON Schema recommends (no lookahead, no
  // \p{...}) so that tools in any language can use it. The validator also refuses unpaired
  // surrogates, which no portable pattern can express.
  pattern: `^[^${CONTROL}]*[^${CONTROL}${BLANK}][^${CONTROL}]*$`,
  description: `The animal's name: 1 to ${NAME_MAX_CODE_POINTS} characters (Unicode code points), not blank, no control characters, no unpaired surrogates. Stored as sent.`,
  examples: ['Rex'],
  'x-message': `must be 1 to ${NAME_MAX_CODE_POINTS} characters, not blank, without control characters`,
});

const categoryId = Int64({
  minimum: 1,
  description: 'Identifier of the category, 1 to 9223372036854775807; kept exactly.',
  examples: [REX.categoryId],
});

export const NewPetSchema = Type.Object(
  { name, categoryId, status: Type.Optional(Type.Ref(PetStatusSchema)) },
  {
    $id: 'NewPet',
    additionalProperties: false,
    description: 'Request body for creating an animal. No status is invented when omitted.',
    examples: [{ name: REX.name, categoryId: REX.categoryId, status: REX.status }],
  },
);

export const PetSchema = Type.Object(
  {
    id: Int64({
      minimum: 1,
      description: 'Assigned by the service; at most 2^53-1.',
      examples: [REX.id],
    }),
    name: Type.String({ description: "The animal's name." }),
    categoryId,
    status: Type.Optional(Type.Ref(PetStatusSchema)),
  },
  {
    $id: 'Pet',
    additionalProperties: false,
    description: 'An animal. `status` is absent when it was never set.',
    examples: [REX],
  },
);

export const PetsSchema = Type.Array(Type.Ref(PetSchema), {
  $id: 'Pets',
  // The second pet was created without a status: the field is absent, never null.
  examples: [[REX, MIA]],
});

export const ListPetsQuerySchema = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: PAGE_SIZE.min,
        maximum: PAGE_SIZE.max,
        default: PAGE_SIZE.default,
        description: 'Maximum number of animals returned.',
        examples: [2],
      }),
    ),
    status: Type.Optional(Type.Ref(PetStatusSchema)),
    cursor: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'Opaque position from the `Link: rel="next"` header of the previous page; bound to the same status filter.',
      }),
    ),
  },
  // A typo such as ?statuss=sold must not silently return the unfiltered list.
  { additionalProperties: false },
);

export const PetIdParamsSchema = Type.Object({
  petId: Int64({
    minimum: 1,
    description: 'Identifier of the animal to retrieve.',
    examples: [REX.id],
  }),
});

export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

export const IdempotencyHeadersSchema = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
      description:
        'Makes a retried create safe: the same key with the same body returns the first response ' +
        `again for ${describeDuration(IDEMPOTENCY_RETENTION_MS)}.`,
    }),
  ),
});

/** The request headers of listPets and getPet (answers/conditional-answer.ts). */
export const ConditionalHeadersSchema = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({
      description:
        'The `ETag` of the answer you hold (or a list of them, or `*`): when it still names the ' +
        'answer, the response is 304 with no body, which counts against your limits like any request.',
    }),
  ),
});

/**
 * The 200 bodies' serializers, compiled from the response schemas above by fast-json-stringify,
 * the library Fastify compiles response schemas with, referenced schemas resolved by $id as
 * Fastify resolves them: every writer of a pet answer gets the same bytes (answers/pet-answers.ts).
 */
export function petSerializers(): PetSerializers {
  // TypeBox's types are JSON Schema as fast-json-stringify reads it; its own typing is narrower.
  type Schema = Parameters<typeof fastJson>[0];
  const schema = (typed: object) => typed as Schema;
  const references = { PetStatus: schema(PetStatusSchema), Pet: schema(PetSchema) };
  const pet = fastJson(schema(PetSchema), { schema: references });
  const pets = fastJson(schema(PetsSchema), { schema: references });
  return { pet: (value) => pet(value), pets: (value) => pets(value) };
}
