import { describe, expect, it } from 'vitest';
import {
  JsonSyntaxError,
  MAX_DEPTH,
  parseStrictJson,
  UnconvertedNumber,
} from '../../src/http/validation/strict-json.js';

function nested(levels: number): string {
  return '['.repeat(levels) + ']'.repeat(levels);
}

function refusal(text: string): JsonSyntaxError {
  try {
    parseStrictJson(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return error;
    throw error;
  }
  throw new Error(`${JSON.stringify(text)} was accepted`);
}

describe('parseStrictJson, when the text is JSON, returns its value', () => {
  it.each<[string, unknown]>([
    ['{"name":"Rex","categoryId":3}', { name: 'Rex', categoryId: 3 }],
    [' \t\r\n{ "a" : [ 1 , 2 ] , "b" : { } } \n', { a: [1, 2], b: {} }],
    ['[]', []],
    ['[true,false,null]', [true, false, null]],
    ['"text"', 'text'],
    ['0', 0],
    ['-7', -7],
    ['123456789012345', 123456789012345],
    ['9007199254740991', 9007199254740991],
    ['-9007199254740991', -9007199254740991],
    ['9007199254740992', 9007199254740992n],
    ['9007199254740993', 9007199254740993n],
    ['9223372036854775807', 9223372036854775807n],
    ['-9223372036854775808', -9223372036854775808n],
    ['18446744073709551616', 18446744073709551616n],
    ['1.0', 1],
    ['1e2', 100],
    ['1E+2', 100],
    ['2.50e1', 25],
    ['100e-2', 1],
    ['-3.000', -3],
    ['9223372036854775807.0', 9223372036854775807n],
    ['922337203685477580.7e1', 9223372036854775807n],
    ['1e19', 10000000000000000000n],
    ['0.0e-999999', 0],
    ['"\\" \\\\ \\/ \\b \\f \\n \\r \\t"', '" \\ / \b \f \n \r \t'],
    ['"\\u00e9\\u00C9"', 'éÉ'],
    ['"\\ud83d\\udc08 Zoë 🐕"', '🐈 Zoë 🐕'],
    ['"a\\ud800b"', 'a\ud800b'],
    ['"\u2028\u2029\u007f"', '\u2028\u2029\u007f'],
  ])('%s', (text, value) => {
    expect(parseStrictJson(text)).toStrictEqual(value);
  });

  it('reads -0 as JSON.parse does', () => {
    expect(Object.is(parseStrictJson('-0'), -0)).toBe(true);
    expect(Object.is(parseStrictJson('-0.0e5'), -0)).toBe(true);
  });

  it.each([
    ['0.5', '0.5'],
    ['0.99999999999999999', '0.99999999999999999'],
    ['9007199254740991.4', '9007199254740991.4'],
    ['-1.5', '-1.5'],
    ['1e-1', '1e-1'],
    ['25e-1', '25e-1'],
    ['1e1000000000', '1e1000000000'],
    ['1e99999999999999999999', '1e99999999999999999999'],
    ['9'.repeat(1001), '9'.repeat(1001)],
  ])('keeps %s, which no number or bigint holds exactly, as its text', (text, kept) => {
    expect(parseStrictJson(`[${text}]`)).toStrictEqual([new UnconvertedNumber(kept)]);
  });

  it('makes a "__proto__" key an own property, never the prototype', () => {
    const value = parseStrictJson('{"__proto__":{"polluted":true},"a":1}') as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__', 'a']);
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toEqual({ polluted: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('takes keys that name properties of Object.prototype as ordinary keys', () => {
    expect(parseStrictJson('{"toString":1,"constructor":2,"hasOwnProperty":3}')).toEqual({
      toString: 1,
      constructor: 2,
      hasOwnProperty: 3,
    });
  });

  it(`accepts arrays and objects nested ${MAX_DEPTH} levels deep`, () => {
    expect(() => parseStrictJson(nested(MAX_DEPTH))).not.toThrow();
    expect(() =>
      parseStrictJson(`${'{"a":'.repeat(MAX_DEPTH - 1)}{}${'}'.repeat(MAX_DEPTH - 1)}`),
    ).not.toThrow();
  });
});

describe('parseStrictJson, when the text breaks a rule, says what was expected and where', () => {
  it.each([
    [
      '',
      'Expected a value (object, array, string, number, true, false or null) in JSON at position 0',
    ],
    [
      '   ',
      'Expected a value (object, array, string, number, true, false or null) in JSON at position 3',
    ],
    [
      'not json',
      'Expected a value (object, array, string, number, true, false or null) in JSON at position 0',
    ],
    [
      'nul',
      'Expected a value (object, array, string, number, true, false or null) in JSON at position 0',
    ],
    [
      '[1,]',
      'Expected a value (object, array, string, number, true, false or null) in JSON at position 3',
    ],
    [
      'NaN',
      'Expected a value (object, array, string, number, true, false or null) in JSON at position 0',
    ],
    [
      '+1',
      'Expected a value (object, array, string, number, true, false or null) in JSON at position 0',
    ],
    [
      '.5',
      'Expected a value (object, array, string, number, true, false or null) in JSON at position 0',
    ],
    ['{"name":"Rex"', "Expected ',' or '}' after property value in JSON at position 13"],
    ['{"a":1 "b":2}', "Expected ',' or '}' after property value in JSON at position 7"],
    ['[1 2]', "Expected ',' or ']' after array element in JSON at position 3"],
    ['[1', "Expected ',' or ']' after array element in JSON at position 2"],
    ['{"a":1,}', 'Expected double-quoted property name in JSON at position 7'],
    ["{'a':1}", 'Expected double-quoted property name in JSON at position 1'],
    ['{name: "A"}', 'Expected double-quoted property name in JSON at position 1'],
    ['{"a" 1}', "Expected ':' after property name in JSON at position 5"],
    ['{"a":1}x', 'Expected only white space after the value in JSON at position 7'],
    ['01', 'Expected only white space after the value in JSON at position 1'],
    ['1 2', 'Expected only white space after the value in JSON at position 2'],
    [
      '\u00a01',
      'Expected a value (object, array, string, number, true, false or null) in JSON at position 0',
    ],
    ['1\u00a0', 'Expected only white space after the value in JSON at position 1'],
    [
      '\ufeff{}',
      'Expected a value (object, array, string, number, true, false or null) in JSON at position 0',
    ],
    ['"abc', 'Unterminated string in JSON at position 4'],
    ['"a\u0001"', 'Bad control character in string literal in JSON at position 2'],
    ['"a\nb"', 'Bad control character in string literal in JSON at position 2'],
    ['"\\x"', 'Bad escaped character in JSON at position 1'],
    ['"\\', 'Bad escaped character in JSON at position 1'],
    ['"\\u12"', 'Bad Unicode escape in JSON at position 1'],
    ['"\\u12G4"', 'Bad Unicode escape in JSON at position 1'],
    ['-', 'No number after minus sign in JSON at position 1'],
    ['-a', 'No number after minus sign in JSON at position 1'],
    ['1.', 'Unterminated fractional number in JSON at position 2'],
    ['1.e5', 'Unterminated fractional number in JSON at position 2'],
    ['1e', 'Exponent part is missing a number in JSON at position 2'],
    ['1e+', 'Exponent part is missing a number in JSON at position 3'],
    ['{"name":"a","name":"b"}', 'Duplicate property name "name" in JSON at position 12'],
    ['{"a":{"x":1,"x":1}}', 'Duplicate property name "x" in JSON at position 12'],
    ['[{"a":1},{"a":1,"b":2,"a":3}]', 'Duplicate property name "a" in JSON at position 22'],
    ['{"__proto__":1,"__proto__":2}', 'Duplicate property name "__proto__" in JSON at position 15'],
    ['{"\\u0061":1,"a":2}', 'Duplicate property name "a" in JSON at position 12'],
    [
      `{"${'k'.repeat(50)}":1,"${'k'.repeat(50)}":2}`,
      `Duplicate property name "${'k'.repeat(40)}..." in JSON at position 56`,
    ],
    [
      nested(MAX_DEPTH + 1),
      `Arrays and objects are nested more than ${MAX_DEPTH} levels deep in JSON at position ${MAX_DEPTH}`,
    ],
    [
      `${'{"a":'.repeat(MAX_DEPTH)}{}${'}'.repeat(MAX_DEPTH)}`,
      `Arrays and objects are nested more than ${MAX_DEPTH} levels deep in JSON at position ${5 * MAX_DEPTH}`,
    ],
  ])('refuses %j', (text, message) => {
    const error = refusal(text);
    expect(error.message).toBe(message);
  });

  it('refuses 100,000 levels of nesting with its own words, not a stack overflow', () => {
    const error = refusal(nested(100_000) + '9'.repeat(20));
    expect(error.message).toContain(`nested more than ${MAX_DEPTH} levels deep`);
  });
});
