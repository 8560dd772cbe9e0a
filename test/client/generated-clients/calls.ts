/**
 * What test/client/generated-clients.test.ts asks of each generated client, and what it gets back.
 * Each `*-calls.ts` beside this file makes the same calls through one generator's code; it is
 * compiled with that code (strict) in a temporary folder, then run against a live server. This
 * file is copied there too, so it imports nothing.
 */

/** A pet as a generated client returned it. */
export interface CalledPet {
  id: number;
  name: string;
  categoryId: number;
  status?: string;
}

export interface CallsInput {
  /** The service's address, ending in /v1. */
  baseUrl: string;
  apiKey: string;
  /** The pet to create, twice with the same Idempotency-Key. */
  name: string;
  categoryId: number;
  idempotencyKey: string;
  /** listPets is walked in pages of this many, following Link rel="next". */
  pageLimit: number;
  /** A pet whose categoryId is above 2^53, made by the test; read with getPet. */
  bigPetId: number;
  /** An id no pet has: getPet answers 404. */
  missingId: number;
}

export interface CallsResult {
  created: { status: number; pet: CalledPet };
  /** The same create again, with the same Idempotency-Key and body. */
  replayed: { status: number; pet: CalledPet; replayedHeader: string | null };
  /** Every page listPets gave, in order, until no Link rel="next" was left. */
  pages: CalledPet[][];
  /** getPet of the created pet. */
  got: { status: number; pet: CalledPet; deprecation: string | null };
  /** getPet of the pet with the large categoryId: what this client made of it. */
  big: CalledPet;
  notFound: { status: number; code: string };
  /** listPets with a key the service never issued. */
  unauthorized: { status: number; code: string };
}

/** The cursor of a Link header's rel="next" URL, or undefined when there is no next page. */
export function nextCursor(link: string | null, baseUrl: string): string | undefined {
  const next = /<([^>]*)>;\s*rel="next"/.exec(link ?? '')?.[1];
  if (next === undefined) return undefined;
  return new URL(next, baseUrl).searchParams.get('cursor') ?? undefined;
}

/** The page walk stops here: a Link that never ends must fail the test, not hang it. */
export const MAX_PAGES = 100;
