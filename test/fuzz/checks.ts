import type { ErrorCode } from '../../src/http/errors/http-error.js';
import { ERRORS } from '../../src/http/errors/error-table.js';
import { PetSchema, PetStatusSchema } from '../../src/http/apps/public/pets/pet.schema.js';

/**
 * What every answer must satisfy, whatever was asked. Each check returns the problems it found
 * (empty when none) instead of throwing, so that a failing case reports all of them at once.
 */

/** Words that only an internal error would put in a message: engine errors, paths, stacks. */
const INTERNALS =
  /Maximum call stack|Unexpected token|Unexpected end of JSON|SyntaxError|TypeError|RangeError|ReferenceError|\[object Object\]|\bat .+:\d+:\d+|node_modules|\/work\/|\/src\/|\.ts:\d|\.js:\d|SQLITE_|ECONN|ETIMEDOUT|ioredis|better-sqlite3|relation "/;

export interface Answer {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
  /** A HEAD answer has no body to check. */
  head?: boolean;
}

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERRORS, code);
}

/** The Error body on a refusal: exactly {code, message, status}, code from the table. */
export function errorProblems(answer: Answer): string[] {
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`answered ${answer.status}`);
  if (answer.status < 400) return problems;
  if (!/^application\/json\b/.test(answer.headers['content-type'] ?? '')) {
    problems.push(`Content-Type of a ${answer.status} is ${answer.headers['content-type']}`);
  }
  if (answer.head) return problems;
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    return [...problems, `a ${answer.status} whose body is not JSON: ${answer.body.slice(0, 200)}`];
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return [
      ...problems,
      `a ${answer.status} whose body is not an object: ${answer.body.slice(0, 200)}`,
    ];
  }
  const fields = body as Record<string, unknown>;
  const keys = Object.keys(fields).sort().join(',');
  if (keys !== 'code,message,status') problems.push(`Error body has the fields ${keys}`);
  if (fields.status !== answer.status)
    problems.push(`body status ${String(fields.status)} on a ${answer.status}`);
  if (!isErrorCode(fields.code))
    problems.push(`code ${JSON.stringify(fields.code)} is not in the error table`);
  else if (ERRORS[fields.code].status !== answer.status) {
    problems.push(
      `code ${fields.code} is a ${ERRORS[fields.code].status} in the table, answered ${answer.status}`,
    );
  }
  if (typeof fields.message !== 'string' || fields.message.trim() === '') {
    problems.push('message is empty or not a string');
  } else if (INTERNALS.test(fields.message)) {
    problems.push(`message shows internals: ${fields.message.slice(0, 200)}`);
  }
  return problems;
}

/** The code of an Error body, when it has one. */
export function codeOf(answer: Answer): string | undefined {
  try {
    const body = JSON.parse(answer.body) as { code?: unknown };
    return typeof body.code === 'string' ? body.code : undefined;
  } catch {
    return undefined;
  }
}

const PET_FIELDS = Object.keys(PetSchema.properties);
const REQUIRED = PetSchema.required ?? [];

/**
 * A Pet as its schema describes it: exactly its fields, ids and categoryIds positive integers,
 * status from the enum. Checked by hand because the schema's int64 is not a TypeBox type.
 */
export function isPet(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const pet = value as Record<string, unknown>;
  const keys = Object.keys(pet);
  return (
    keys.every((k) => PET_FIELDS.includes(k)) &&
    REQUIRED.every((k) => keys.includes(k)) &&
    Number.isSafeInteger(pet.id) &&
    (pet.id as number) >= 1 &&
    typeof pet.name === 'string' &&
    Number.isInteger(pet.categoryId) &&
    (pet.categoryId as number) >= 1 &&
    (pet.status === undefined || (PetStatusSchema.enum as unknown[]).includes(pet.status))
  );
}

export function petProblems(value: unknown): string[] {
  return isPet(value) ? [] : [`not a Pet: ${JSON.stringify(value)?.slice(0, 200)}`];
}

/** A page of pets: Pets, ids ascending, at most `limit`, all of `status` when filtered. */
export function pageProblems(
  text: string,
  expected: { limit: number; status?: string; afterId?: number },
): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [`a 200 whose body is not JSON: ${text.slice(0, 200)}`];
  }
  if (!Array.isArray(value) || !value.every(isPet)) return [`not Pets: ${text.slice(0, 200)}`];
  const pets = value as Array<{ id: number; status?: string }>;
  const problems: string[] = [];
  if (pets.length > expected.limit)
    problems.push(`${pets.length} pets on a page of ${expected.limit}`);
  if (pets.some((pet, i) => i > 0 && pet.id <= (pets[i - 1]?.id ?? 0)))
    problems.push('ids not ascending');
  if (expected.status !== undefined && pets.some((pet) => pet.status !== expected.status)) {
    problems.push(`a pet of another status than ${expected.status}`);
  }
  if (expected.afterId !== undefined && pets.some((pet) => pet.id <= (expected.afterId ?? 0))) {
    problems.push(`a pet at or before the cursor's id ${expected.afterId}`);
  }
  return problems;
}

/** The categoryId of a Pet's JSON text, exactly: JSON.parse would round it above 2^53. */
export function categoryIdText(text: string): string | undefined {
  return /"categoryId":(-?\d+)/.exec(text)?.[1];
}
