import fc from 'fast-check';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KNOWN_QUERIES_MAX,
  knownPlainQuery,
  plainId,
  plainQuery,
} from '../../src/http/fast-path/plain-request.js';
import {
  ListPetsQuerySchema,
  PetIdParamsSchema,
  PetStatusSchema,
} from '../../src/http/apps/public/pets/pet.schema.js';
import {
  createValidatorCompiler,
  type JsonSchema,
} from '../../src/http/validation/validator-compiler.js';

/**
 * What the fast path reads of a URL, it reads as the routes do: a query or id it takes
 * is one the route's own parsing and validation take too, to the same values. Checked against
 * Fastify's query parser and the routes' validator, on URLs made of the pieces that matter.
 */
let app: FastifyInstance;

beforeAll(async () => {
  const schemas = [PetStatusSchema as JsonSchema];
  app = Fastify();
  app.addSchema(PetStatusSchema);
  app.setValidatorCompiler(createValidatorCompiler(schemas));
  app.get(
    '/pets',
    { schema: { querystring: ListPetsQuerySchema } },
    async (request) => request.query,
  );
  app.get('/pets/:petId', { schema: { params: PetIdParamsSchema } }, async (request) => ({
    petId: String((request.params as { petId: bigint }).petId),
  }));
  await app.ready();
});

afterAll(async () => {
  await app.close();
});

const piece = fc.constantFrom(
  '0',
  '1',
  '9',
  '20',
  '100',
  '101',
  '020',
  '1.5',
  '-1',
  '+1',
  'sold',
  'available',
  'pending',
  'adopted',
  'cDF8M3w',
  'abc_-',
  '%41',
  '%3D',
  '+',
  ' ',
  '?',
  '#',
  ';',
  'é',
  '=',
  '&',
  '',
);
/** A value: mostly one piece, sometimes a few run together. */
const value = fc.oneof(
  { weight: 4, arbitrary: piece },
  { weight: 1, arbitrary: fc.array(piece, { maxLength: 4 }).map((p) => p.join('')) },
);
const name = fc.constantFrom('limit', 'status', 'cursor', 'Limit', 'x', '');
/** name=value pairs joined by &, now and then without the =: the queries clients could send. */
const query = fc
  .array(
    fc
      .tuple(name, fc.boolean(), value)
      .map(([n, equals, v]) => (equals || v !== '' ? `${n}=${v}` : n)),
    { maxLength: 4 },
  )
  .map((pairs) => pairs.join('&'));
const text = fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join(''));

describe('the plain readings of the fast path', () => {
  it('take only queries the route takes, to the same values', async () => {
    await fc.assert(
      fc.asyncProperty(query, async (query) => {
        const plain = plainQuery(query);
        if (plain === undefined) return;
        const res = await app.inject({ method: 'GET', url: `/pets?${query}` });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual(plain);
      }),
      { numRuns: 1_000 },
    );
  });

  it('take only pet ids the route takes, to the same value', async () => {
    const id = fc.oneof(
      text,
      fc.bigInt({ min: -10n, max: 2n ** 64n }).map(String),
      fc.constantFrom('9223372036854775807', '9223372036854775808', '01', '1e3', '0x10'),
    );
    await fc.assert(
      fc.asyncProperty(id, async (petId) => {
        const plain = plainId(petId);
        if (plain === undefined) return;
        const res = await app.inject({ method: 'GET', url: `/pets/${petId}` });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({ petId: String(plain) });
      }),
      { numRuns: 1_000 },
    );
  });

  it('take the plain forms themselves', () => {
    expect(plainQuery('')).toEqual({ limit: 20 });
    expect(plainQuery('limit=20&status=sold&cursor=cDF8M3w')).toEqual({
      limit: 20,
      status: 'sold',
      cursor: 'cDF8M3w',
    });
    expect(plainId('9223372036854775807')).toBe('9223372036854775807');
    expect(plainId('9223372036854775808')).toBeUndefined();
  });

  it('read each query text as plainQuery does when it is read once per text, past the table bound', () => {
    // Texts repeated and new, sharing their first characters, taken and refused, more than the
    // table holds: each gets its own answer, the first time and again.
    const texts: string[] = ['', 'limit=0', 'limit=1&limit=2', 'x=1'];
    for (let i = 0; i < KNOWN_QUERIES_MAX + 60; i++) {
      const status = i % 3 === 0 ? '&status=sold' : '';
      const cursor = i % 7 === 0 ? `&cursor=c${i}` : '';
      texts.push(`limit=${(i % 100) + 1}${status}${cursor}`);
    }
    for (let round = 0; round < 2; round++) {
      for (const text of texts) {
        const known = knownPlainQuery(text);
        expect(known).toEqual(plainQuery(text));
        if (known !== undefined) expect(Object.isFrozen(known)).toBe(true);
      }
    }
  });
});
