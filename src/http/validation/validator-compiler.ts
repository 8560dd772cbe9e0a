import type { FastifySchema, FastifySchemaCompiler } from 'fastify';
import { INT64_MAX } from '../../domain/pets/pet.js';
import { httpErrors } from '../errors/http-error.js';
import { UnconvertedNumber } from './strict-json.js';

/**
 * Validates requests against the route schemas (a JSON Schema subset: an object of string,
 * integer or enum fields, one level deep, and $ref) with two things Ajv cannot do here: int64 values are checked and kept exactly as
 * bigint, and each refusal names the field in words a person can act on. A schema using a keyword
 * outside this subset is refused when its route is compiled, so the OpenAPI document, built from
 * the same schemas, can never promise a check that is not made.
 */
export interface JsonSchema {
  $id?: string;
  $ref?: string;
  type?: 'object' | 'string' | 'integer' | 'array';
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  enum?: string[];
  minimum?: number;
  maximum?: number;
  format?: string;
  default?: unknown;
  'x-message'?: string;
}

/** Keywords this validator enforces. */
const ENFORCED = new Set([
  '$ref',
  'type',
  'properties',
  'required',
  'additionalProperties',
  'minLength',
  'maxLength',
  'pattern',
  'enum',
  'minimum',
  'maximum',
  'format',
  'default',
]);
/** Keywords that promise no check: names, words and examples for people and tools. */
const ANNOTATIONS = new Set(['$id', 'title', 'description', 'examples', 'deprecated', 'x-message']);
const LONE_SURROGATE = /\p{Cs}/u;
/** The only format with a meaning here: an integer checked over the whole int64 range. */
const FORMATS = new Set(['int64']);
/**
 * A part (body, query, path, headers) is an object of fields, and a field is a string or an
 * integer: one level only, so a nested object, or its keywords on a field, is refused.
 */
const TYPES = { part: new Set(['object']), field: new Set(['string', 'integer']) };
const PART_ONLY = new Set(['properties', 'required', 'additionalProperties']);
type Level = keyof typeof TYPES;

type Part = 'body' | 'querystring' | 'params' | 'headers';
type Check = { ok: true; value: unknown } | { ok: false; message: string };

const PART_NAMES: Record<Part, string> = {
  body: 'field',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

/** The words of each refusal; the error table's examples are built from them too. */
export const problems = {
  givenTwice: (name: string) => `${name} must be given once`,
  isNull: (name: string) => `${name} must not be null`,
  notOneOf: (name: string, values: readonly string[]) =>
    `${name} must be one of ${values.join(', ')}`,
  notString: (name: string) => `${name} must be a string`,
  stringLength: (name: string, min: number | undefined, max: number | undefined) =>
    min !== undefined && max !== undefined
      ? `${name} must be ${min} to ${max} characters`
      : max !== undefined
        ? `${name} must be at most ${max} characters`
        : `${name} must be at least ${min ?? 0} characters`,
  /** A pattern the schema gives no words for (its `x-message`). */
  notInForm: (name: string) => `${name} is not in the form this field takes (see the API document)`,
  brokenText: (name: string) => `${name} must be text without unpaired surrogates`,
  integerRange: (name: string, lower: bigint, upper: bigint) =>
    `${name} must be an integer from ${lower} to ${upper}`,
  required: (name: string) => `${name} is required`,
  unknown: (part: Part, name: string, allowed: readonly string[]) =>
    `Unknown ${PART_NAMES[part]} ${name}: allowed are ${allowed.join(', ')}`,
  notObject: (part: Part) =>
    part === 'body' ? 'Request body must be a JSON object' : `Invalid ${PART_NAMES[part]}s`,
} as const;

/** Throws when a schema uses a keyword (or type, or format) that would not be enforced. */
function assertEnforceable(schema: JsonSchema, where: string, level: Level): void {
  for (const [keyword, value] of Object.entries(schema)) {
    if (ANNOTATIONS.has(keyword)) continue;
    if (!ENFORCED.has(keyword) || (level === 'field' && PART_ONLY.has(keyword))) {
      throw new Error(`${where}: the validator does not enforce the keyword "${keyword}"`);
    }
    if (keyword === 'type' && !TYPES[level].has(String(value))) {
      throw new Error(`${where}: the validator does not enforce type ${JSON.stringify(value)}`);
    }
    if (keyword === 'format' && !FORMATS.has(String(value))) {
      throw new Error(`${where}: the validator does not enforce format ${JSON.stringify(value)}`);
    }
  }
}

export function createValidatorCompiler(
  schemas: readonly JsonSchema[],
): FastifySchemaCompiler<FastifySchema> {
  const byId = new Map(schemas.map((s) => [s.$id, s]));
  const resolve = (schema: JsonSchema): JsonSchema => {
    if (schema.$ref === undefined) return schema;
    const target = byId.get(schema.$ref.replace(/#$/, ''));
    if (target === undefined) throw new Error(`unknown schema reference ${schema.$ref}`);
    return target;
  };

  return ({ schema, httpPart, method, url }) => {
    const part = (httpPart ?? 'body') as Part;
    const root = resolve(schema as JsonSchema);
    const where = `${method} ${url} ${part}`;
    assertEnforceable(root, where, 'part');
    for (const [name, property] of Object.entries(root.properties ?? {})) {
      assertEnforceable(property, `${where}.${name}`, 'field');
      assertEnforceable(resolve(property), `${where}.${name}`, 'field');
    }
    const refuse =
      part === 'body'
        ? (message: string) => ({ error: httpErrors.invalidBody(message) })
        : (message: string) => ({ error: httpErrors.invalidParameter(message) });
    const patterns = new Map<string, RegExp>();
    const regex = (source: string) => {
      let compiled = patterns.get(source);
      if (compiled === undefined) patterns.set(source, (compiled = new RegExp(source, 'u')));
      return compiled;
    };

    const checkValue = (name: string, raw: unknown, s: JsonSchema): Check => {
      const fromText = part !== 'body';
      if (fromText && Array.isArray(raw)) return { ok: false, message: problems.givenTwice(name) };
      if (raw === null) return { ok: false, message: problems.isNull(name) };
      if (s.enum !== undefined) {
        return typeof raw === 'string' && s.enum.includes(raw)
          ? { ok: true, value: raw }
          : { ok: false, message: problems.notOneOf(name, s.enum) };
      }
      if (s.type === 'string') {
        if (typeof raw !== 'string') return { ok: false, message: problems.notString(name) };
        const length = [...raw].length;
        const tooShort = s.minLength !== undefined && length < s.minLength;
        const tooLong = s.maxLength !== undefined && length > s.maxLength;
        // Stricter than any pattern can portably say: no text with unpaired surrogates.
        const broken = LONE_SURROGATE.test(raw);
        if (
          tooShort ||
          tooLong ||
          broken ||
          (s.pattern !== undefined && !regex(s.pattern).test(raw))
        ) {
          const message = s['x-message'];
          return {
            ok: false,
            message:
              message !== undefined
                ? `${name} ${message}`
                : tooShort || tooLong
                  ? problems.stringLength(name, s.minLength, s.maxLength)
                  : broken
                    ? problems.brokenText(name)
                    : problems.notInForm(name),
          };
        }
        return { ok: true, value: raw };
      }
      if (s.type === 'integer') return checkInteger(name, raw, s, fromText);
      throw new Error(`schema type ${String(s.type)} is not supported for ${name}`);
    };

    // Resolved once, at compile time: the validator runs on every request.
    const properties = root.properties ?? {};
    const names = Object.keys(properties);
    const fields = Object.entries(properties).map(([key, propertySchema]) => {
      const s = resolve(propertySchema);
      return {
        key,
        schema: s,
        required: root.required?.includes(key) === true,
        fallback: propertySchema.default ?? s.default,
      };
    });
    const closed = root.additionalProperties === false;
    return (data: unknown) => {
      if (!isObject(data)) return refuse(problems.notObject(part));
      const input = data;
      if (closed) {
        for (const key in input) {
          if (Object.hasOwn(input, key) && !Object.hasOwn(properties, key)) {
            return refuse(problems.unknown(part, key, names));
          }
        }
      }
      const output: Record<string, unknown> = part === 'headers' ? input : {};
      for (const field of fields) {
        const raw = Object.hasOwn(input, field.key) ? input[field.key] : undefined;
        if (raw === undefined) {
          if (field.required) return refuse(problems.required(field.key));
          if (field.fallback !== undefined) output[field.key] = field.fallback;
          continue;
        }
        const checked = checkValue(field.key, raw, field.schema);
        if (!checked.ok) return refuse(checked.message);
        output[field.key] = checked.value;
      }
      return { value: output };
    };
  };
}

/**
 * A JSON object, or the object Fastify builds from the query, path or headers: not an array, and
 * not a number the body parser kept as its text (src/http/validation/strict-json.ts).
 */
function isObject(data: unknown): data is Record<string, unknown> {
  return (
    data !== null &&
    typeof data === 'object' &&
    !Array.isArray(data) &&
    !(data instanceof UnconvertedNumber)
  );
}

interface IntegerBounds {
  lower: bigint;
  upper: bigint;
  /** The same bounds as numbers, when both are safe: the fast path for ordinary values. */
  safe: { lower: number; upper: number } | undefined;
}
const boundsOf = new WeakMap<JsonSchema, IntegerBounds>();

function integerBounds(s: JsonSchema): IntegerBounds {
  let bounds = boundsOf.get(s);
  if (bounds === undefined) {
    const min = s.minimum ?? (s.format === 'int64' ? undefined : Number.MIN_SAFE_INTEGER);
    const max = s.maximum ?? (s.format === 'int64' ? undefined : Number.MAX_SAFE_INTEGER);
    const lower = BigInt(min ?? -INT64_MAX - 1n);
    const upper = max === undefined ? INT64_MAX : BigInt(max);
    const safe =
      lower >= BigInt(Number.MIN_SAFE_INTEGER) && upper <= BigInt(Number.MAX_SAFE_INTEGER)
        ? { lower: Number(lower), upper: Number(upper) }
        : undefined;
    bounds = { lower, upper, safe };
    boundsOf.set(s, bounds);
  }
  return bounds;
}

const SHORT_DECIMAL = /^-?\d{1,15}$/;
const DECIMAL = /^-?\d{1,20}$/;

function checkInteger(name: string, raw: unknown, s: JsonSchema, fromText: boolean): Check {
  const bounds = integerBounds(s);
  const refusal = (): Check => ({
    ok: false,
    message: problems.integerRange(name, bounds.lower, bounds.upper),
  });
  const int64 = s.format === 'int64';
  // Up to 15 digits a double is exact: most values never need a bigint.
  const small =
    fromText && typeof raw === 'string' && SHORT_DECIMAL.test(raw)
      ? Number(raw)
      : !fromText && typeof raw === 'number' && Number.isSafeInteger(raw)
        ? raw
        : undefined;
  if (small !== undefined && bounds.safe !== undefined) {
    if (small < bounds.safe.lower || small > bounds.safe.upper) return refusal();
    return { ok: true, value: int64 ? BigInt(small) : small };
  }
  let value: bigint;
  if (small !== undefined) {
    value = BigInt(small);
  } else if (fromText) {
    if (typeof raw !== 'string' || !DECIMAL.test(raw)) return refusal();
    value = BigInt(raw);
  } else if (typeof raw === 'bigint') {
    value = raw;
  } else {
    // The body parser gives every integer as a safe number or a bigint; anything else (a string,
    // a fraction or a huge integer kept as text by src/http/validation/strict-json.ts) is refused, never
    // rounded.
    return refusal();
  }
  if (value < bounds.lower || value > bounds.upper) return refusal();
  return { ok: true, value: int64 ? value : Number(value) };
}
