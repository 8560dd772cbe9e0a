import { INT64_MAX, isPetStatus, PAGE_SIZE, type PetStatus } from '../../domain/pets/pet.js';
import type { PageQuery } from '../../domain/pets/pet-service.js';

/**
 * limit, status and cursor, each at most once, in their plain form; else undefined. Never a query
 * the route would refuse or read otherwise (test/http/fast-path.property.test.ts).
 */
export function plainQuery(text: string): PageQuery | undefined {
  const query: { limit?: number; status?: PetStatus; cursor?: string } = {};
  if (text !== '') {
    for (const part of text.split('&')) {
      const equals = part.indexOf('=');
      const name = part.slice(0, equals);
      const value = part.slice(equals + 1);
      if (equals < 0 || name in query) return undefined;
      if (name === 'limit' && /^[1-9][0-9]{0,2}$/.test(value) && Number(value) <= PAGE_SIZE.max) {
        query.limit = Number(value);
      } else if (name === 'status' && isPetStatus(value)) {
        query.status = value;
      } else if (name === 'cursor' && /^[A-Za-z0-9_-]{1,200}$/.test(value)) {
        query.cursor = value;
      } else {
        return undefined;
      }
    }
  }
  return { ...query, limit: query.limit ?? PAGE_SIZE.default };
}

/**
 * Clients repeat few distinct queries (each its own page size and filter), so each text is read
 * once: plainQuery's answer, frozen, since every request of that text shares it. Forgotten all at
 * once when the table is full, so made-up queries cannot grow it.
 */
const knownQueries = new Map<string, PageQuery | null>();
export const KNOWN_QUERIES_MAX = 256;

/** plainQuery, read once per distinct text. */
export function knownPlainQuery(text: string): PageQuery | undefined {
  let query = knownQueries.get(text);
  if (query === undefined) {
    if (knownQueries.size >= KNOWN_QUERIES_MAX) knownQueries.clear();
    const read = plainQuery(text);
    query = read === undefined ? null : Object.freeze(read);
    knownQueries.set(text, query);
  }
  return query ?? undefined;
}

/**
 * A pet id in its plain form (no sign, no leading zero) within int64, as that text; else
 * undefined. Only the 19-digit ids need a BigInt to tell.
 */
export function plainId(text: string): string | undefined {
  if (!/^[1-9][0-9]{0,18}$/.test(text)) return undefined;
  return text.length < 19 || BigInt(text) <= INT64_MAX ? text : undefined;
}
