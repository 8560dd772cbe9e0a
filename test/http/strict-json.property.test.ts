import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonSyntaxError, parseStrictJson } from '../../src/http/validation/strict-json.js';
import { binaryString } from '../fuzz/code-points.js';

/** A JSON text and the value it must parse to: integers exact, keys unique. */
interface Sample {
  text: string;
  value: unknown;
}

const space = fc.constantFrom('', ' ', '\n', '\t', '\r\n  ');

/** An integer in one of the ways JSON can write it, all of them exactly that integer. */
const integer: fc.Arbitrary<Sample> = fc
  .tuple(
    fc.oneof(
      fc.bigInt({ min: -(2n ** 53n), max: 2n ** 53n }),
      fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }),
    ),
    fc.constantFrom('', '.0', '.000', 'e0', 'E+0', '0e-1', '00E-2', '000e-3'),
  )
  .map(([n, suffix]) => ({
    // 0 takes no more zeros: JSON has no leading zeros ("00e-1" is not JSON).
    text: `${n}${n === 0n && suffix.startsWith('0') ? '' : suffix}`,
    value: n >= -Number.MAX_SAFE_INTEGER && n <= Number.MAX_SAFE_INTEGER ? Number(n) : n,
  }));

/** An integer with trailing zeros written as digits and an exponent, e.g. 25e3. */
const scaled: fc.Arbitrary<Sample> = fc
  .tuple(fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }), fc.integer({ min: 0, max: 12 }))
  .map(([digits, exponent]) => {
    const n = digits * 10n ** BigInt(exponent);
    return {
      text: `${digits}e${exponent}`,
      value: n >= -Number.MAX_SAFE_INTEGER && n <= Number.MAX_SAFE_INTEGER ? Number(n) : n,
    };
  });

// Lone surrogates included: JSON.stringify writes them as \u escapes, which read back as written.
const text = fc.oneof(fc.string(), binaryString(12));

const { json } = fc.letrec<{ json: Sample; array: Sample; object: Sample }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<Sample>(
      { text: 'null', value: null },
      { text: 'true', value: true },
      { text: 'false', value: false },
    ),
    text.map((s) => ({ text: JSON.stringify(s), value: s })),
    integer,
    scaled,
    tie('array'),
    tie('object'),
  ),
  array: fc.tuple(fc.array(tie('json'), { maxLength: 5 }), space).map(([items, ws]) => ({
    text: `[${ws}${items.map((item) => item.text).join(`${ws},`)}]`,
    value: items.map((item) => item.value),
  })),
  object: fc
    .tuple(
      fc.uniqueArray(
        fc.tuple(fc.oneof(text, fc.constantFrom('__proto__', 'constructor')), tie('json')),
        { selector: ([key]) => key, maxLength: 5 },
      ),
      space,
    )
    .map(([entries, ws]) => ({
      text: `{${ws}${entries.map(([key, v]) => `${JSON.stringify(key)}${ws}:${v.text}`).join(`,${ws}`)}${ws}}`,
      // Object.fromEntries, like JSON.parse, makes "__proto__" an own property.
      value: Object.fromEntries(entries.map(([key, v]) => [key, v.value])),
    })),
}));

/**
 * A value spelled out for comparison: types, -0, key order and prototypes included. toStrictEqual
 * takes an own "constructor" key for the object's type, so it cannot compare these values.
 */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return ['array', value.map(shape)];
  if (value !== null && typeof value === 'object') {
    return [
      Object.getPrototypeOf(value) === Object.prototype ? 'object' : 'exotic object',
      Object.entries(value).map(([k, v]) => [k, shape(v)]),
    ];
  }
  if (typeof value === 'bigint') return ['bigint', String(value)];
  if (Object.is(value, -0)) return ['-0'];
  return [typeof value, value];
}

/** What JSON.parse makes of a value: the nearest double for every integer. */
function asDoubles(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(asDoubles);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asDoubles(v)]));
  }
  return value;
}

describe('parseStrictJson on random JSON without duplicate keys or fractions', () => {
  it('returns the value written, every integer exact', () => {
    fc.assert(
      fc.property(json, ({ text, value }) => {
        expect(shape(parseStrictJson(text))).toEqual(shape(value));
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees with JSON.parse, up to JSON.parse rounding integers beyond 2^53', () => {
    fc.assert(
      fc.property(json, ({ text }) => {
        expect(shape(asDoubles(parseStrictJson(text)))).toEqual(shape(JSON.parse(text)));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('parseStrictJson on any text', () => {
  /** JSON texts with one character removed, replaced or inserted, and arbitrary strings. */
  const anyText = fc.oneof(
    fc.string(),
    fc
      .tuple(json, fc.nat(), fc.integer({ min: 0, max: 2 }), fc.string({ maxLength: 1 }))
      .map(([{ text: t }, at, how, c]) => {
        const i = at % (t.length + 1);
        return t.slice(0, i) + (how === 1 ? '' : c) + t.slice(how === 2 ? i : i + 1);
      }),
  );

  it('throws only JsonSyntaxError, and accepts only what JSON.parse accepts', () => {
    fc.assert(
      fc.property(anyText, (t) => {
        try {
          parseStrictJson(t);
        } catch (error) {
          expect(error).toBeInstanceOf(JsonSyntaxError);
          return;
        }
        expect(() => JSON.parse(t), t).not.toThrow();
      }),
      { numRuns: 3000 },
    );
  });
});
