import {
  ApiKeyBannedError,
  InsufficientScopeError,
  type ErrorCode,
  PetApiError,
  PetClient,
  PetClientError,
  type PetClientOptions,
} from '@pet-adoption/client';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { startDroppingProxy } from '../helpers/dropping-proxy.js';
import { call, type TestServer, useServer } from '../helpers/test-server.js';

const server = useServer({ env: { PETSTORE_BAN_AFTER: '2' } });

/** A fetch that counts what it sends, so tests can prove what the client did not send. */
function countingFetch() {
  const sent: string[] = [];
  const wrapped: typeof fetch = (input, init) => {
    sent.push(`${init?.method ?? 'GET'} ${String(input)}`);
    return fetch(input, init);
  };
  return { sent, fetch: wrapped };
}

function client(s: TestServer, apiKey: string, extra: Partial<PetClientOptions<'number'>> = {}) {
  return new PetClient({
    baseUrl: s.url,
    apiKey,
    sleep: async () => {},
    random: () => 0,
    ...extra,
  });
}

describe('@pet-adoption/client against the real service', () => {
  it('walks 1,000 pets in pages, each exactly once, following Link rel="next"', async () => {
    const s = server();
    s.clock.set(Date.parse('2026-11-24T01:00:00Z'));
    const before = await s.storage.pets.list({ afterId: 0, limit: 1_000_000 });
    const afterId = before.at(-1)?.id ?? 0;
    await s.storage.pets.insertMany(
      Array.from({ length: 1_000 }, (_, i) => ({ name: `Walker ${i}`, categoryId: BigInt(i + 1) })),
    );
    const { key } = await s.createKey('pro');
    const counted = countingFetch();
    const pets = client(s, key, { fetch: counted.fetch });
    const walked = [];
    for await (const pet of pets.listPets({ limit: 100 })) walked.push(pet);
    const mine = walked.filter((p) => p.id > afterId);
    expect(mine).toHaveLength(1_000);
    expect(new Set(mine.map((p) => p.id)).size).toBe(1_000);
    expect(mine.map((p) => p.id)).toEqual([...mine.map((p) => p.id)].sort((a, b) => a - b));
    expect(counted.sent).toHaveLength(Math.ceil(walked.length / 100));
    expect(pets.quota).toMatchObject({ limit: 300, remaining: 300 - counted.sent.length });
  });

  it('honours a 429: waits Retry-After plus jitter, then succeeds', async () => {
    const s = server();
    s.clock.set(Date.parse('2026-11-24T02:00:19Z'));
    const { key } = await s.createKey('enterprise', { perMinute: 2, perDay: 100 });
    for (let i = 0; i < 2; i++)
      expect((await call(s, 'GET', '/v1/pets', { key })).status).toBe(200);
    const waits: number[] = [];
    const counted = countingFetch();
    const pets = client(s, key, {
      fetch: counted.fetch,
      random: () => 0.5,
      // The injected clock: waiting moves the server's time instead of sleeping.
      sleep: async (ms) => {
        waits.push(ms);
        s.clock.advance(ms);
      },
    });
    const page = await pets.listPetsPage({ limit: 1 });
    expect(page.pets.length).toBeLessThanOrEqual(1);
    expect(counted.sent).toHaveLength(2);
    expect(waits).toEqual([41_000 + 500]); // Retry-After 41 s, plus half of the 1 s jitter
    expect(pets.quota?.windows.map((w) => w.name)).toEqual(['minute', 'day']);
    expect(pets.quota?.windows[0]).toMatchObject({ limit: 2, remaining: 1, windowSeconds: 60 });
  });

  it('backs off exponentially while 429s continue, and gives up with the typed error', async () => {
    const s = server();
    s.clock.set(Date.parse('2026-11-24T03:00:00Z'));
    const { key } = await s.createKey('enterprise', { perMinute: 50, perDay: 1 });
    expect((await call(s, 'GET', '/v1/pets', { key })).status).toBe(200);
    const waits: number[] = [];
    const pets = client(s, key, {
      retry: { maxWaitMs: 10 * 86_400_000, maxRetries: 1 },
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    const failure = await pets.listPetsPage().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PetApiError);
    expect((failure as PetApiError).code).toBe('rate_limited');
    expect(waits).toEqual([21 * 3_600_000]); // until 00:00 UTC, once; then it stopped
  });

  it('refuses to sleep longer than maxWaitMs: a used-up day is thrown at once', async () => {
    const s = server();
    s.clock.set(Date.parse('2026-11-24T04:00:00Z'));
    const { key } = await s.createKey('enterprise', { perMinute: 50, perDay: 1 });
    await call(s, 'GET', '/v1/pets', { key });
    const counted = countingFetch();
    const failure = await client(s, key, { fetch: counted.fetch })
      .listPetsPage()
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'rate_limited', status: 429, retryAfterSeconds: 72_000 });
    expect(counted.sent).toHaveLength(1);
  });

  it('surfaces a ban as ApiKeyBannedError without sending anything more', async () => {
    const s = server();
    s.clock.set(Date.parse('2026-11-24T05:00:00Z'));
    const { key } = await s.createKey('enterprise', { perMinute: 1, perDay: 100 });
    const codes = [];
    for (let i = 0; i < 5; i++) {
      codes.push(((await call(s, 'GET', '/v1/pets', { key })).body as { code?: string }).code);
    }
    expect(codes.at(-1)).toBe('api_key_banned');
    const counted = countingFetch();
    const failure = await client(s, key, { fetch: counted.fetch })
      .createPet({ name: 'Never', categoryId: 1 })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiKeyBannedError);
    expect(failure).toMatchObject({ code: 'api_key_banned', status: 429, retryAfterSeconds: 900 });
    expect(counted.sent).toHaveLength(1);
  });

  it('surfaces a missing scope as InsufficientScopeError naming it, without retrying', async () => {
    const s = server();
    const { key } = await s.createKey('pro', undefined, ['pets:read']);
    const counted = countingFetch();
    const pets = client(s, key, { fetch: counted.fetch });
    await expect(pets.listPetsPage()).resolves.toBeDefined();
    const failure = await pets
      .createPet({ name: 'Not allowed', categoryId: 1 })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InsufficientScopeError);
    expect(failure).toMatchObject({ code: 'insufficient_scope', status: 403, scope: 'pets:write' });
    expect(counted.sent).toHaveLength(2);
  });

  it('retries a create whose connection dropped after the server handled it, and creates one pet', async () => {
    const s = server();
    s.clock.set(Date.parse('2026-11-24T06:00:00Z'));
    const { key } = await s.createKey('pro');
    const proxy = await startDroppingProxy(s.url, 1);
    try {
      const waits: number[] = [];
      const pets = new PetClient({
        baseUrl: proxy.url,
        apiKey: key,
        random: () => 0,
        sleep: async (ms) => {
          waits.push(ms);
        },
      });
      const name = `Dropped ${Date.now()}`;
      const pet = await pets.createPet({ name, categoryId: 7, status: 'available' });
      expect(proxy.dropped).toBe(1);
      expect(waits).toEqual([500]);
      expect(pet).toMatchObject({ name, categoryId: 7, status: 'available' });
      const all = await s.storage.pets.list({ afterId: 0, limit: 1_000_000 });
      expect(all.filter((p) => p.name === name).map((p) => p.id)).toEqual([pet.id]);
    } finally {
      await proxy.close();
    }
  });

  it('does not retry a request that cannot be repeated safely: errors are typed by code', async () => {
    const s = server();
    const { key } = await s.createKey('pro');
    const counted = countingFetch();
    const pets = client(s, key, { fetch: counted.fetch });
    const invalid = await pets.createPet({ name: '', categoryId: 1 }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(PetApiError);
    expect(invalid).toMatchObject({ code: 'invalid_body', status: 400 });
    expect((invalid as PetApiError).requestId).toMatch(/\S+/);
    const missing = await pets.getPet(999_999_999).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 'not_found', status: 404 });
    expect(counted.sent).toHaveLength(2);
    expectTypeOf<PetApiError['code']>().toEqualTypeOf<ErrorCode>();
    expectTypeOf<'rate_limited'>().toExtend<ErrorCode>();
  });

  it('reads int64 exactly: bigints on request, refusing to round them otherwise', async () => {
    const s = server();
    const { key } = await s.createKey('pro');
    const exact = new PetClient({ baseUrl: `${s.url}/v1/`, apiKey: key, int64: 'bigint' });
    const big = 9_223_372_036_854_775_807n;
    const pet = await exact.createPet({ name: 'Huge', categoryId: big });
    expect(pet.categoryId).toBe(big);
    expect(typeof pet.id).toBe('bigint');
    expectTypeOf(pet.categoryId).toEqualTypeOf<bigint>();
    await expect(exact.getPet(pet.id)).resolves.toEqual(pet);

    const plain = new PetClient({ baseUrl: s.url, apiKey: key });
    const failure = await plain.getPet(pet.id).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PetClientError);
    expect(failure).toMatchObject({ kind: 'unsafe_integer' });
  });

  it('asks for compression, and with its cache on revalidates: a 304 gives the kept answer, a change the new one', async () => {
    const s = server();
    const { key } = await s.createKey('pro');
    const exchanges: Array<{ sent: Headers; status: number; encoding: string | null }> = [];
    const recording: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      exchanges.push({
        sent: new Headers(init?.headers),
        status: response.status,
        encoding: response.headers.get('content-encoding'),
      });
      return response;
    };
    const writer = new PetClient({ baseUrl: s.url, apiKey: key, int64: 'bigint' });
    for (let i = 0; i < 20; i++) {
      await writer.createPet({
        name: `Kept ${i}`,
        categoryId: 9_007_199_254_740_993n,
        status: 'pending',
      });
    }
    const cached = new PetClient({
      baseUrl: s.url,
      apiKey: key,
      int64: 'bigint',
      cache: true,
      fetch: recording,
    });
    const page = await cached.listPetsPage({ status: 'pending', limit: 100 });
    expect(page.pets.length).toBeGreaterThanOrEqual(20);
    expect(page.pets.at(-1)?.categoryId).toBe(9_007_199_254_740_993n);
    const pet = await cached.getPet(page.pets[0]!.id);
    expect(exchanges.map((e) => [e.status, e.sent.get('accept-encoding')])).toEqual([
      [200, 'br, gzip'],
      [200, 'br, gzip'],
    ]);
    // The page is over 1 KiB: it came compressed, and fetch decoded it.
    expect(exchanges[0]?.encoding).toBe('br');

    await expect(cached.listPetsPage({ status: 'pending', limit: 100 })).resolves.toEqual(page);
    await expect(cached.getPet(pet.id)).resolves.toEqual(pet);
    expect(exchanges.slice(2).map((e) => [e.status, e.sent.get('if-none-match') !== null])).toEqual(
      [
        [304, true],
        [304, true],
      ],
    );

    const added = await writer.createPet({ name: 'Changed', categoryId: 1, status: 'pending' });
    const changed = await cached.listPetsPage({ status: 'pending', limit: 100 });
    expect(exchanges.at(-1)?.status).toBe(200);
    expect(changed.pets.at(-1)?.id).toBe(added.id);

    // Without the option nothing is kept: no If-None-Match is ever sent.
    const plain = client(s, key, { fetch: recording });
    await plain.getPet(added.id);
    await plain.getPet(added.id);
    expect(exchanges.slice(-2).map((e) => [e.status, e.sent.get('if-none-match')])).toEqual([
      [200, null],
      [200, null],
    ]);
  });

  it('marks getPet deprecated in its published types', async () => {
    const { readFile } = await import('node:fs/promises');
    const types = await readFile(
      new URL('../../packages/client/dist/client.d.ts', import.meta.url),
      'utf8',
    );
    expect(types).toMatch(/@deprecated[^]*?\*\/\s*getPet\(/);
  });
});
