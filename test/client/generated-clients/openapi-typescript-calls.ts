/**
 * The calls of calls.ts through openapi-fetch, typed by the `paths` that openapi-typescript
 * generates into ./openapi.ts beside this file (the way packages/client uses them).
 * Compiled with that code; not part of the repository's own build (tsconfig.json leaves it out).
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './openapi.js';
import { type CallsInput, type CallsResult, MAX_PAGES, nextCursor } from './calls.js';

type Pet = components['schemas']['Pet'];

function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`openapi-typescript: no ${what}`);
  return value;
}

export async function calls(input: CallsInput): Promise<CallsResult> {
  const client = createClient<paths>({
    baseUrl: input.baseUrl,
    headers: { Authorization: `Bearer ${input.apiKey}` },
  });
  const create = () =>
    client.POST('/pets', {
      body: { name: input.name, categoryId: input.categoryId, status: 'available' },
      params: { header: { 'idempotency-key': input.idempotencyKey } },
    });
  const first = await create();
  const again = await create();

  const pages: Pet[][] = [];
  let cursor: string | undefined;
  do {
    const page = await client.GET('/pets', {
      params: { query: { limit: input.pageLimit, cursor } },
    });
    pages.push(present(page.data, `page ${pages.length + 1}`));
    cursor = nextCursor(page.response.headers.get('link'), input.baseUrl);
  } while (cursor !== undefined && pages.length < MAX_PAGES);

  const created = present(first.data, 'created pet');
  const getPet = (petId: number) => client.GET('/pets/{petId}', { params: { path: { petId } } });
  const got = await getPet(created.id);
  const big = await getPet(input.bigPetId);
  const missing = await getPet(input.missingId);
  const stranger = createClient<paths>({
    baseUrl: input.baseUrl,
    headers: { Authorization: 'Bearer pa_live_000000000000000000000000000000000000' },
  });
  const refused = await stranger.GET('/pets');

  return {
    created: { status: first.response.status, pet: created },
    replayed: {
      status: again.response.status,
      pet: present(again.data, 'replayed pet'),
      replayedHeader: again.response.headers.get('idempotent-replayed'),
    },
    pages,
    got: {
      status: got.response.status,
      pet: present(got.data, 'pet'),
      deprecation: got.response.headers.get('deprecation'),
    },
    big: present(big.data, 'big pet'),
    notFound: { status: missing.response.status, code: present(missing.error, '404').code },
    unauthorized: { status: refused.response.status, code: present(refused.error, '401').code },
  };
}
