/**
 * The one JSON parser for request bodies (RFC 8259). It reads every body the same way and refuses
 * what JSON.parse would quietly read as something else:
 * - a duplicate key in an object (JSON.parse keeps the last value, other parsers the first);
 * - arrays and objects nested more than MAX_DEPTH deep (so no body can exhaust the stack).
 * Numbers are never rounded: an integer, also one written `1.0`, `1e2` or `2.50e1` (JSON Schema's
 * integer), is worked out on its decimal digits and becomes a `number` when safe, else a `bigint`;
 * any other number becomes an UnconvertedNumber holding its text, which the validator refuses
 * where an integer is required. Objects are plain, as JSON.parse makes them: a `"__proto__"` key is
 * an own property like any other, never the object's prototype. White space is only space, tab,
 * CR and LF. A refusal is a JsonSyntaxError in our own words with the position (UTF-16 index) where
 * it was found, so no engine wording ever reaches a client.
 *
 * JSON.parse with a reviver reading `context.source` (Node 22+) would give the exact numbers, but
 * not the rest: it drops a duplicate key's first value before any reviver runs, its refusals are in
 * the engine's words, and it has no depth limit of ours. Hence a parser of our own.
 */

/** Deeper than any body this API takes (1 level), shallow enough to never strain the stack. */
export const MAX_DEPTH = 64;

/**
 * Integers with more digits are kept as text: int64 has 19 digits, and `1e999999999` as a bigint
 * would take hundreds of megabytes, where 1000 digits convert at once.
 */
export const MAX_INTEGER_DIGITS = 1000;

/** Integers of up to 15 digits are exact in a double whatever they are (2^53 has 16 digits). */
const EXACT_DIGITS = 15;

/**
 * A JSON number given neither as a `number` nor as a `bigint`: one that is not an integer (`0.5`,
 * or `0.99999999999999999`, which a double would round to 1), or an integer of more than
 * MAX_INTEGER_DIGITS digits. It keeps the number's text; nothing here rounds it.
 */
export class UnconvertedNumber {
  constructor(readonly text: string) {}
}

export class JsonSyntaxError extends Error {
  constructor(
    readonly problem: string,
    readonly position: number,
  ) {
    super(`${problem} in JSON at position ${position}`);
    this.name = 'JsonSyntaxError';
  }
}

/** Parses one JSON text; throws JsonSyntaxError when it is not one, or breaks a rule above. */
export function parseStrictJson(text: string): unknown {
  return new Parser(text).parse();
}

const EXPECTED_VALUE = 'Expected a value (object, array, string, number, true, false or null)';

const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** A key as a message shows it: quoted, escaped, and short. */
function quoteKey(key: string): string {
  return JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}...` : key);
}

/** The exact value of an integer written as decimal digits (no sign, no leading zeros). */
function integerOf(negative: boolean, digits: string): number | bigint {
  // 17 digits and more are beyond 2^53 (16 digits). Every integer up to 2^53 is a double, so a
  // value that rounds to at most 2^53 - 1 was exact.
  if (digits.length <= 16) {
    const value = Number(digits);
    if (value <= Number.MAX_SAFE_INTEGER) return negative ? -value : value;
  }
  const big = BigInt(digits);
  return negative ? -big : big;
}

class Parser {
  private pos = 0;

  constructor(private readonly text: string) {}

  parse(): unknown {
    this.skipWhitespace();
    const value = this.value(1);
    this.skipWhitespace();
    if (this.pos < this.text.length) this.fail('Expected only white space after the value');
    return value;
  }

  private fail(problem: string, position = this.pos): never {
    throw new JsonSyntaxError(problem, position);
  }

  private skipWhitespace(): void {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const code = text.charCodeAt(pos);
      if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) break;
      pos++;
    }
    this.pos = pos;
  }

  /** The value at pos; `depth` counts the arrays and objects it would open, itself included. */
  private value(depth: number): unknown {
    const code = this.text.charCodeAt(this.pos);
    switch (code) {
      case 0x7b:
        return this.object(depth);
      case 0x5b:
        return this.array(depth);
      case 0x22:
        return this.string();
      case 0x74:
        return this.literal('true', true);
      case 0x66:
        return this.literal('false', false);
      case 0x6e:
        return this.literal('null', null);
      default:
        return code === 0x2d || isDigit(code) ? this.number() : this.fail(EXPECTED_VALUE);
    }
  }

  private literal<T>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.pos)) this.fail(EXPECTED_VALUE);
    this.pos += word.length;
    return value;
  }

  private enter(depth: number): void {
    if (depth > MAX_DEPTH) {
      this.fail(`Arrays and objects are nested more than ${MAX_DEPTH} levels deep`);
    }
    this.pos++;
    this.skipWhitespace();
  }

  private object(depth: number): Record<string, unknown> {
    this.enter(depth);
    const text = this.text;
    const result: Record<string, unknown> = {};
    if (text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return result;
    }
    for (;;) {
      if (text.charCodeAt(this.pos) !== 0x22) this.fail('Expected double-quoted property name');
      const keyPosition = this.pos;
      const key = this.string();
      if (Object.hasOwn(result, key)) {
        this.fail(`Duplicate property name ${quoteKey(key)}`, keyPosition);
      }
      this.skipWhitespace();
      if (text.charCodeAt(this.pos) !== 0x3a) this.fail("Expected ':' after property name");
      this.pos++;
      this.skipWhitespace();
      const value = this.value(depth + 1);
      if (key === '__proto__') {
        // Assigning would set the prototype; JSON.parse, too, makes it an own property.
        Object.defineProperty(result, key, {
          value,
          writable: true,
          enumerable: true,
          configurable: true,
        });
      } else {
        result[key] = value;
      }
      this.skipWhitespace();
      const code = text.charCodeAt(this.pos);
      this.pos++;
      if (code === 0x7d) return result;
      if (code !== 0x2c) this.fail("Expected ',' or '}' after property value", this.pos - 1);
      this.skipWhitespace();
    }
  }

  private array(depth: number): unknown[] {
    this.enter(depth);
    const text = this.text;
    const result: unknown[] = [];
    if (text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return result;
    }
    for (;;) {
      result.push(this.value(depth + 1));
      this.skipWhitespace();
      const code = text.charCodeAt(this.pos);
      this.pos++;
      if (code === 0x5d) return result;
      if (code !== 0x2c) this.fail("Expected ',' or ']' after array element", this.pos - 1);
      this.skipWhitespace();
    }
  }

  private string(): string {
    const text = this.text;
    const start = this.pos + 1;
    let pos = start;
    let result = '';
    let chunkStart = start;
    for (;;) {
      const code = text.charCodeAt(pos);
      if (code === 0x22) {
        this.pos = pos + 1;
        // Without escapes (most strings), the string is one slice of the text.
        return chunkStart === start ? text.slice(start, pos) : result + text.slice(chunkStart, pos);
      }
      if (code === 0x5c) {
        result += text.slice(chunkStart, pos);
        const escape = text.charAt(pos + 1);
        if (escape === 'u') {
          let unit = 0;
          for (let i = pos + 2; i < pos + 6; i++) {
            const digit = hexValue(text.charCodeAt(i));
            if (digit < 0) this.fail('Bad Unicode escape', pos);
            unit = unit * 16 + digit;
          }
          // One UTF-16 unit per escape: a pair of escapes makes its character, a lone surrogate
          // stays one (the validator refuses it in text).
          result += String.fromCharCode(unit);
          pos += 6;
        } else {
          const decoded = ESCAPES[escape];
          if (decoded === undefined) this.fail('Bad escaped character', pos);
          result += decoded;
          pos += 2;
        }
        chunkStart = pos;
        continue;
      }
      if (code < 0x20) this.fail('Bad control character in string literal', pos);
      if (pos >= text.length) this.fail('Unterminated string', pos);
      pos++;
    }
  }

  private number(): unknown {
    const text = this.text;
    const start = this.pos;
    let pos = start;
    const negative = text.charCodeAt(pos) === 0x2d;
    if (negative) pos++;
    const integerStart = pos;
    let code = text.charCodeAt(pos);
    if (!isDigit(code)) this.fail('No number after minus sign', pos);
    // Short integers are summed as they are read: exact, and no slice to convert.
    let sum = code - 0x30;
    code = text.charCodeAt(++pos);
    if (sum !== 0) {
      while (isDigit(code)) {
        sum = sum * 10 + (code - 0x30);
        code = text.charCodeAt(++pos);
      }
    }
    const integerEnd = pos;
    let fractionEnd = pos;
    if (code === 0x2e) {
      code = text.charCodeAt(++pos);
      if (!isDigit(code)) this.fail('Unterminated fractional number', pos);
      while (isDigit(code)) code = text.charCodeAt(++pos);
      fractionEnd = pos;
    }
    let exponent = 0;
    if (code === 0x65 || code === 0x45) {
      const exponentStart = ++pos;
      code = text.charCodeAt(pos);
      if (code === 0x2b || code === 0x2d) code = text.charCodeAt(++pos);
      if (!isDigit(code)) this.fail('Exponent part is missing a number', pos);
      while (isDigit(code)) code = text.charCodeAt(++pos);
      // Huge exponents become ±Infinity or lose digits: either way far beyond MAX_INTEGER_DIGITS.
      exponent = Number(text.slice(exponentStart, pos));
    }
    this.pos = pos;

    if (fractionEnd === integerEnd && exponent === 0) {
      const length = integerEnd - integerStart;
      if (length <= EXACT_DIGITS) return negative ? -sum : sum;
      if (length > MAX_INTEGER_DIGITS) return new UnconvertedNumber(text.slice(start, pos));
      return integerOf(negative, text.slice(integerStart, integerEnd));
    }

    // The value is digits x 10^scale, exactly: decided on the text, never through a double.
    let digits = text.slice(integerStart, integerEnd);
    if (fractionEnd > integerEnd) digits += text.slice(integerEnd + 1, fractionEnd);
    let scale = exponent - Math.max(0, fractionEnd - integerEnd - 1);
    let first = 0;
    while (first < digits.length && digits.charCodeAt(first) === 0x30) first++;
    if (first === digits.length) return negative ? -0 : 0;
    let end = digits.length;
    while (digits.charCodeAt(end - 1) === 0x30) end--;
    scale += digits.length - end;
    digits = digits.slice(first, end);
    if (scale < 0 || digits.length + scale > MAX_INTEGER_DIGITS) {
      return new UnconvertedNumber(text.slice(start, pos));
    }
    return integerOf(negative, digits + '0'.repeat(scale));
  }
}
