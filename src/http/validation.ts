import type { FastifySchema, FastifySchemaCompiler } from 'fastify';
import { INT64_MAX } from '../domain/pets/pet.js';
import { HttpError } from './errors.js';

/**
 * Validates requests against the route schemas (a JSON Schema subset: object, string, integer,
 * enum, $ref) with two things Ajv cannot do here: int64 values are checked and kept exactly as
 * bigint, and each refusal names the field in words a person can act on.
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

type Part = 'body' | 'querystring' | 'params' | 'headers';
type Check = { ok: true; value: unknown } | { ok: false; message: string };

const PART_NAMES: Record<Part, string> = {
  body: 'field',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

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

  return ({ schema, httpPart }) => {
    const part = (httpPart ?? 'body') as Part;
    const root = resolve(schema as JsonSchema);
    const code = part === 'body' ? 'invalid_body' : 'invalid_parameter';
    const patterns = new Map<string, RegExp>();
    const regex = (source: string) => {
      let compiled = patterns.get(source);
      if (compiled === undefined) patterns.set(source, (compiled = new RegExp(source, 'u')));
      return compiled;
    };

    const checkValue = (name: string, raw: unknown, s: JsonSchema): Check => {
      const fromText = part !== 'body';
      if (fromText && Array.isArray(raw))
        return { ok: false, message: `${name} must be given once` };
      if (raw === null) return { ok: false, message: `${name} must not be null` };
      if (s.enum !== undefined) {
        return typeof raw === 'string' && s.enum.includes(raw)
          ? { ok: true, value: raw }
          : { ok: false, message: `${name} must be one of ${s.enum.join(', ')}` };
      }
      if (s.type === 'string') {
        if (typeof raw !== 'string') return { ok: false, message: `${name} must be a string` };
        const length = [...raw].length;
        const tooShort = s.minLength !== undefined && length < s.minLength;
        const tooLong = s.maxLength !== undefined && length > s.maxLength;
        if (tooShort || tooLong || (s.pattern !== undefined && !regex(s.pattern).test(raw))) {
          const bounds = `${s.minLength ?? 0} to ${s.maxLength ?? 'any number of'} characters`;
          return { ok: false, message: `${name} ${s['x-message'] ?? `must be ${bounds}`}` };
        }
        return { ok: true, value: raw };
      }
      if (s.type === 'integer') return checkInteger(name, raw, s, fromText);
      throw new Error(`schema type ${String(s.type)} is not supported for ${name}`);
    };

    return (data: unknown) => {
      if (data === null || typeof data !== 'object' || Array.isArray(data)) {
        const message =
          part === 'body' ? 'Request body must be a JSON object' : `Invalid ${PART_NAMES[part]}s`;
        return { error: new HttpError(code, message) };
      }
      const input = data as Record<string, unknown>;
      const properties = root.properties ?? {};
      if (root.additionalProperties === false) {
        for (const key of Object.keys(input)) {
          if (!Object.hasOwn(properties, key)) {
            const allowed = Object.keys(properties).join(', ');
            const message = `Unknown ${PART_NAMES[part]} ${key}: allowed are ${allowed}`;
            return { error: new HttpError(code, message) };
          }
        }
      }
      const output: Record<string, unknown> = part === 'headers' ? input : {};
      for (const [key, propertySchema] of Object.entries(properties)) {
        const s = resolve(propertySchema);
        const raw = Object.hasOwn(input, key) ? input[key] : undefined;
        if (raw === undefined) {
          if (root.required?.includes(key)) {
            return { error: new HttpError(code, `${key} is required`) };
          }
          if (s.default !== undefined || propertySchema.default !== undefined) {
            output[key] = propertySchema.default ?? s.default;
          }
          continue;
        }
        const checked = checkValue(key, raw, s);
        if (!checked.ok) return { error: new HttpError(code, checked.message) };
        output[key] = checked.value;
      }
      return { value: output };
    };
  };
}

function checkInteger(name: string, raw: unknown, s: JsonSchema, fromText: boolean): Check {
  const min = s.minimum ?? (s.format === 'int64' ? undefined : Number.MIN_SAFE_INTEGER);
  const max = s.maximum ?? (s.format === 'int64' ? undefined : Number.MAX_SAFE_INTEGER);
  const lower = BigInt(min ?? -INT64_MAX - 1n);
  const upper = max === undefined ? INT64_MAX : BigInt(max);
  const refusal = {
    ok: false,
    message: `${name} must be an integer from ${lower} to ${upper}`,
  } as const;
  let value: bigint;
  if (fromText) {
    if (typeof raw !== 'string' || !/^-?\d{1,20}$/.test(raw)) return refusal;
    value = BigInt(raw);
  } else if (typeof raw === 'bigint') {
    value = raw;
  } else if (typeof raw === 'number' && Number.isSafeInteger(raw)) {
    value = BigInt(raw);
  } else {
    // Fractions, and integers beyond 2^53 that arrived as doubles (e.g. 1e19), are not exact.
    return refusal;
  }
  if (value < lower || value > upper) return refusal;
  return { ok: true, value: s.format === 'int64' ? value : Number(value) };
}
