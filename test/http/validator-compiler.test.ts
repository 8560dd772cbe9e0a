import { describe, expect, it } from 'vitest';
import type { FastifySchema } from 'fastify';
import { UnconvertedNumber } from '../../src/http/validation/strict-json.js';
import { createValidatorCompiler } from '../../src/http/validation/validator-compiler.js';

function compile(schema: Record<string, unknown>, httpPart = 'body') {
  const compiler = createValidatorCompiler([]);
  return compiler({ schema: schema as FastifySchema, method: 'POST', url: '/v1/x', httpPart });
}

describe('the validator compiler', () => {
  it.each([
    ['a keyword it does not enforce', { type: 'integer', multipleOf: 2 }, 'multipleOf'],
    ['exclusiveMinimum', { type: 'integer', exclusiveMinimum: 0 }, 'exclusiveMinimum'],
    ['a format it does not know', { type: 'string', format: 'email' }, 'format "email"'],
    ['a type it does not check', { type: 'number' }, 'type "number"'],
    ['a combinator', { anyOf: [{ type: 'string' }] }, 'anyOf'],
  ])('refuses to compile a route whose schema uses %s', (_what, property, named) => {
    const schema = { type: 'object', properties: { field: property } };
    expect(() => compile(schema)).toThrow(named);
    expect(() => compile(schema)).toThrow('POST /v1/x body.field');
  });

  // It checks one level of fields: a nested object would compile and then fail every request.
  it.each([
    [
      'a nested object',
      { type: 'object', properties: { city: { type: 'string' } } },
      'type "object"',
    ],
    ['properties without a type', { properties: { city: { type: 'string' } } }, '"properties"'],
    ['required below the top', { type: 'string', required: ['x'] }, '"required"'],
  ])('refuses to compile a field that is %s', (_what, property, named) => {
    const schema = { type: 'object', properties: { name: { type: 'string' }, address: property } };
    expect(() => compile(schema)).toThrow(named);
    expect(() => compile(schema)).toThrow('POST /v1/x body.address');
  });

  it('refuses a nested object reached through a $ref', () => {
    const compiler = createValidatorCompiler([
      { $id: 'Address', type: 'object', properties: { city: { type: 'string' } } },
    ]);
    const schema = { type: 'object', properties: { address: { $ref: 'Address#' } } };
    expect(() =>
      compiler({ schema: schema as FastifySchema, method: 'POST', url: '/v1/x', httpPart: 'body' }),
    ).toThrow('type "object"');
  });

  it('refuses an unenforced keyword at the top of a part, e.g. minProperties', () => {
    expect(() => compile({ type: 'object', minProperties: 1, properties: {} })).toThrow(
      'minProperties',
    );
  });

  it('accepts annotations, which promise no check', () => {
    const schema = {
      type: 'object',
      description: 'a body',
      properties: {
        name: { type: 'string', description: 'x', examples: ['Rex'], title: 'Name' },
        n: { type: 'integer', format: 'int64', minimum: 1, deprecated: true },
      },
    };
    const validate = compile(schema);
    expect(validate({ name: 'Rex', n: 5 })).toEqual({ value: { name: 'Rex', n: 5n } });
  });

  it('says what is wrong with a string in words, never "0 to any number of characters"', () => {
    const validate = compile({
      type: 'object',
      properties: {
        p: { type: 'string', pattern: '^a+$' },
        long: { type: 'string', maxLength: 3 },
        short: { type: 'string', minLength: 2 },
      },
    });
    const message = (body: unknown) =>
      (validate(body) as { error: { message: string } }).error.message;
    expect(message({ p: 'b' })).toBe(
      'p is not in the form this field takes (see the API document)',
    );
    expect(message({ long: 'abcd' })).toBe('long must be at most 3 characters');
    expect(message({ short: 'a' })).toBe('short must be at least 2 characters');
    expect(message({ p: 'a\uD800' })).toBe('p must be text without unpaired surrogates');
  });

  it('refuses text with an unpaired surrogate, which no portable pattern can say', () => {
    const validate = compile({
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, maxLength: 10 } },
    });
    expect(validate({ name: 'a\uD800b' })).toMatchObject({ error: { code: 'invalid_body' } });
    expect(validate({ name: 'a\uD83D\uDC08b' })).toEqual({ value: { name: 'a\uD83D\uDC08b' } });
  });

  it('refuses a number kept as text where an integer, a string or an object is required', () => {
    const validate = compile({
      type: 'object',
      properties: { n: { type: 'integer', format: 'int64' }, s: { type: 'string' } },
    });
    const kept = new UnconvertedNumber('0.99999999999999999');
    expect(validate({ n: kept })).toMatchObject({
      error: { code: 'invalid_body', message: expect.stringContaining('n must be an integer') },
    });
    expect(validate({ s: kept })).toMatchObject({ error: { message: 's must be a string' } });
    expect(validate(kept)).toMatchObject({
      error: { message: 'Request body must be a JSON object' },
    });
  });
});
