/**
 * The calls of calls.ts through the functions orval generates with its `fetch` client (with
 * `headers: true`, so header parameters such as Idempotency-Key are arguments), generated into
 * ./orval beside this file with the service's address as `baseUrl`. Compiled with that code; not
 * part of the repository's own build (tsconfig.json leaves it out).
 */
import { createPet, getPet, listPets, type Pet } from './orval/pets.js';
import { type CallsInput, type CallsResult, MAX_PAGES, nextCursor } from './calls.js';

export async function calls(input: CallsInput): Promise<CallsResult> {
  // orval's fetch functions know no security scheme: the key goes in every call's RequestInit.
  const auth: RequestInit = { headers: { Authorization: `Bearer ${input.apiKey}` } };
  const create = () =>
    createPet(
      { name: input.name, categoryId: input.categoryId, status: 'available' },
      { 'idempotency-key': input.idempotencyKey },
      auth,
    );
  const first = await create();
  const again = await create();
  if (first.status !== 201 || again.status !== 201) {
    throw new Error(`orval: createPet answered ${first.status}, then ${again.status}`);
  }

  const pages: Pet[][] = [];
  let cursor: string | undefined;
  do {
    const page = await listPets({ limit: input.pageLimit, cursor }, undefined, auth);
    if (page.status !== 200) throw new Error(`orval: listPets answered ${page.status}`);
    pages.push(page.data);
    cursor = nextCursor(page.headers.get('link'), input.baseUrl);
  } while (cursor !== undefined && pages.length < MAX_PAGES);

  const got = await getPet(first.data.id, undefined, auth);
  const big = await getPet(input.bigPetId, undefined, auth);
  const missing = await getPet(input.missingId, undefined, auth);
  const refused = await listPets(undefined, undefined, {
    headers: { Authorization: 'Bearer pa_live_000000000000000000000000000000000000' },
  });
  if (got.status !== 200 || big.status !== 200) {
    throw new Error(`orval: getPet answered ${got.status} and ${big.status}`);
  }
  if (missing.status !== 404 || refused.status !== 401) {
    throw new Error(`orval: expected 404 and 401, got ${missing.status} and ${refused.status}`);
  }

  return {
    created: { status: first.status, pet: first.data },
    replayed: {
      status: again.status,
      pet: again.data,
      replayedHeader: again.headers.get('idempotent-replayed'),
    },
    pages,
    got: { status: got.status, pet: got.data, deprecation: got.headers.get('deprecation') },
    big: big.data,
    notFound: { status: missing.status, code: missing.data.code },
    unauthorized: { status: refused.status, code: refused.data.code },
  };
}
