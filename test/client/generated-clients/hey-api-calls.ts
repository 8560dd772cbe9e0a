/**
 * The calls of calls.ts through the SDK @hey-api/openapi-ts generates with its Fetch API client
 * (`-c @hey-api/client-fetch`), generated into ./hey-api beside this file. Compiled with that
 * code; not part of the repository's own build (tsconfig.json leaves it out).
 */
import { createClient } from './hey-api/client/index.js';
import { type CreatePetData, createPet, getPet, listPets, type Pet } from './hey-api/index.js';
import { type CallsInput, type CallsResult, MAX_PAGES, nextCursor } from './calls.js';

function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`hey-api: no ${what}`);
  return value;
}

export async function calls(input: CallsInput): Promise<CallsResult> {
  // The generated operations name the bearer scheme; the client sends `auth` as its token.
  const client = createClient({ baseUrl: input.baseUrl, auth: input.apiKey });
  // Typed by the operation's own headers: the client would send any header, declared or not.
  const headers: CreatePetData['headers'] = { 'idempotency-key': input.idempotencyKey };
  const create = () =>
    createPet({
      client,
      body: { name: input.name, categoryId: input.categoryId, status: 'available' },
      headers,
    });
  const first = await create();
  const again = await create();

  const pages: Pet[][] = [];
  let cursor: string | undefined;
  do {
    const page = await listPets({ client, query: { limit: input.pageLimit, cursor } });
    pages.push(present(page.data, `page ${pages.length + 1}`));
    cursor = nextCursor(page.response?.headers.get('link') ?? null, input.baseUrl);
  } while (cursor !== undefined && pages.length < MAX_PAGES);

  const created = present(first.data, 'created pet');
  const got = await getPet({ client, path: { petId: created.id } });
  const big = await getPet({ client, path: { petId: input.bigPetId } });
  const missing = await getPet({ client, path: { petId: input.missingId } });
  const stranger = createClient({
    baseUrl: input.baseUrl,
    auth: 'pa_live_000000000000000000000000000000000000',
  });
  const refused = await listPets({ client: stranger });

  return {
    created: { status: present(first.response, 'response').status, pet: created },
    replayed: {
      status: present(again.response, 'response').status,
      pet: present(again.data, 'replayed pet'),
      replayedHeader: again.response?.headers.get('idempotent-replayed') ?? null,
    },
    pages,
    got: {
      status: present(got.response, 'response').status,
      pet: present(got.data, 'pet'),
      deprecation: got.response?.headers.get('deprecation') ?? null,
    },
    big: present(big.data, 'big pet'),
    notFound: {
      status: present(missing.response, 'response').status,
      code: present(missing.error, '404 error').code,
    },
    unauthorized: {
      status: present(refused.response, 'response').status,
      code: present(refused.error, '401 error').code,
    },
  };
}
