import { parse, stringify } from 'lossless-json';
import { PetClientError } from './errors.js';
import type { Int64Mode } from './types.js';

const INTEGER = /^-?\d+$/;

/**
 * JSON.parse rounds integers above 2^53. This parser keeps them: as bigints when asked, and
 * otherwise refuses to return a rounded number.
 */
export function parseJson(text: string, int64: Int64Mode): unknown {
  return parse(text, null, (value: string) => {
    if (!INTEGER.test(value)) return Number(value);
    if (int64 === 'bigint') return BigInt(value);
    const number = Number(value);
    if (!Number.isSafeInteger(number)) {
      throw new PetClientError(
        'unsafe_integer',
        `the integer ${value} cannot be a JavaScript number exactly; create the client with int64: 'bigint'`,
      );
    }
    return number;
  });
}

/** JSON.stringify, except bigints are written as exact JSON numbers. */
export function stringifyJson(value: unknown): string {
  return stringify(value) ?? 'null';
}
