import { domainErrors } from '../errors.js';
import type { Plan } from '../rate-limits/plans.js';

/** What a key's row is sorted by in a listing; `id` breaks ties so every position is unique. */
export const KEY_SORTS = ['created', 'label', 'lastUsed'] as const;
export type KeySort = (typeof KEY_SORTS)[number];
export const KEY_STATES = ['active', 'expired', 'revoked', 'banned'] as const;
export type KeyState = (typeof KEY_STATES)[number];
export type SortOrder = 'asc' | 'desc';

export const KEY_LIST_LIMIT = { min: 1, max: 1_000, default: 100 } as const;

/** The value of the sort column at a position: a time in epoch ms (0: never used) or a label. */
export type SortValue = number | string;

/** One page of the key listing as the store reads it. */
export interface KeyListQuery {
  /** Rows to read; the caller asks one more than it shows to learn whether a next page exists. */
  limit: number;
  sort: KeySort;
  order: SortOrder;
  /** Strictly after this position in the order asked for. */
  after?: { value: SortValue; id: string };
  state?: KeyState;
  plan?: Plan;
  /** Case-insensitive substring of the label. */
  label?: string;
  /** The instant `state` is judged at (expiry and bans depend on it). */
  now: number;
}

/** The filter and order a cursor was made for: a cursor of another one would skip or repeat keys. */
export interface KeyListShape {
  sort: KeySort;
  order: SortOrder;
  state?: KeyState;
  plan?: Plan;
  label?: string;
}

const VERSION = 'k1';

function shapeOf(shape: KeyListShape): string {
  return JSON.stringify([
    shape.sort,
    shape.order,
    shape.state ?? null,
    shape.plan ?? null,
    shape.label ?? null,
  ]);
}

/**
 * Keyset position of the key listing: the last row's sort value and id, and the listing it came
 * from. Opaque to clients (base64url JSON).
 */
export function encodeKeyCursor(
  shape: KeyListShape,
  last: { value: SortValue; id: string },
): string {
  return Buffer.from(JSON.stringify([VERSION, shapeOf(shape), last.value, last.id])).toString(
    'base64url',
  );
}

export function decodeKeyCursor(
  cursor: string,
  shape: KeyListShape,
): { value: SortValue; id: string } {
  if (!/^[A-Za-z0-9_-]{1,1024}$/.test(cursor)) throw domainErrors.invalidCursor();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    throw domainErrors.invalidCursor();
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) throw domainErrors.invalidCursor();
  const [version, madeFor, value, id] = parsed as unknown[];
  const valueFits =
    shape.sort === 'label' ? typeof value === 'string' : Number.isSafeInteger(value);
  if (version !== VERSION || typeof id !== 'string' || !valueFits) {
    throw domainErrors.invalidCursor();
  }
  if (madeFor !== shapeOf(shape)) throw domainErrors.invalidKeyCursorShape();
  return { value: value as SortValue, id };
}

export function isKeyState(value: string): value is KeyState {
  return (KEY_STATES as readonly string[]).includes(value);
}
