import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { expectRateLimitHeaders } from '../helpers/rate-limit-headers.js';
import { ownSharedBackends } from '../helpers/shared-backends.js';
import { startServer, TEST_BACKEND, type TestServer, useForFile } from '../helpers/test-server.js';

/**
 * Conditional requests and compression on listPets and getPet (answers/conditional-answer.ts), on
 * both writers: the fast path (a server at info, its cache started) and Fastify's routes (a server
 * at debug, where the fast path is off). Both servers share one database, as two instances behind
 * a load balancer do.
 */
const backends = useForFile(
  'backends',
  async () => {
    if (TEST_BACKEND === 'postgres') return ownSharedBackends();
    const dir = mkdtempSync(join(tmpdir(), 'petstore-conditional-'));
    return {
      env: { DATABASE_URL: `sqlite:${join(dir, 'pets.db')}` },
      cleanUp: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
  (started) => started.cleanUp(),
);
const fast = useForFile(
  'fast path server',
  async () => {
    const server = await startServer({
      env: { ...backends().env },
      logLevel: 'info',
      logLines: [],
    });
    await server.services.cache.start();
    return server;
  },
  (server) => server.close(),
);
const framework = useForFile(
  'framework server',
  () => startServer({ env: { ...backends().env }, logLevel: 'debug', logLines: [] }),
  (server) => server.close(),
);

const agent = new http.Agent({ keepAlive: true });

afterEach(() => {
  vi.restoreAllMocks();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The bytes on the wire, not decoded. */
  bytes: Buffer;
}

function get(server: TestServer, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http
      .get(server.url + path, { agent, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            bytes: Buffer.concat(chunks),
          }),
        );
      })
      .on('error', reject);
  });
}

async function createPet(server: TestServer, key: string, body: string): Promise<string> {
  const answer = await new Promise<Answer>((resolve, reject) => {
    const request = http.request(
      `${server.url}/v1/pets`,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'if-none-match': '*',
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            bytes: Buffer.concat(chunks),
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
  // If-None-Match means nothing to createPet.
  expect(answer.status).toBe(201);
  return /"id":(\d+)/.exec(answer.bytes.toString())?.[1] ?? '';
}

/** A pet whose categoryId is past 2^53: its digits must come back exactly, compressed or not. */
const INT64_CATEGORY = '9007199254740993';
const petBody = (name: string, status: string) =>
  `{"name":"${name}","categoryId":${INT64_CATEGORY},"status":"${status}"}`;

/** Counts the requests the routes answer (they ask the cache through page() and pet()). */
function routeCalls(server: TestServer): () => number {
  const page = vi.spyOn(server.services.cache, 'page');
  const pet = vi.spyOn(server.services.cache, 'pet');
  return () => page.mock.calls.length + pet.mock.calls.length;
}

const remaining = (answer: Answer) => Number(answer.headers['x-ratelimit-remaining']);

describe.each([
  ['the fast path', fast, true],
  ['the routes', framework, false],
] as const)('conditional requests on %s', (_name, server, fastPath) => {
  it('answers If-None-Match naming the tag (or *, a weak twin, in a list) with 304: no body, the tag, the rate-limit headers, counted', async () => {
    const { key } = await server().createKey('business');
    const auth = { authorization: `Bearer ${key}` };
    const id = await createPet(server(), key, petBody('Tagged', 'pending'));
    const first = await get(server(), `/v1/pets/${id}`, auth); // the route caches it
    expect(first.status).toBe(200);
    const etag = first.headers.etag ?? '';
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{20,}"$/);
    expect(first.headers['cache-control']).toBe('private, no-cache');
    expect(first.headers.vary).toBe('Accept-Encoding');

    const byRoute = routeCalls(server());
    let before = remaining(first);
    for (const ifNoneMatch of [etag, '*', `W/${etag}`, `"other", ${etag}`]) {
      const answer = await get(server(), `/v1/pets/${id}`, {
        ...auth,
        'if-none-match': ifNoneMatch,
      });
      expect(answer.status, ifNoneMatch).toBe(304);
      expect(answer.bytes.length).toBe(0);
      expect(answer.headers.etag).toBe(etag);
      expect(answer.headers['cache-control']).toBe('private, no-cache');
      expect(answer.headers.vary).toBe('Accept-Encoding');
      expect(answer.headers.deprecation).toBe(first.headers.deprecation);
      expect(answer.headers['content-type']).toBeUndefined();
      expectRateLimitHeaders(new Headers(answer.headers as Record<string, string>));
      // A 304 counts against the key's limits like any request.
      expect(remaining(answer)).toBe(before - 1);
      before = remaining(answer);
    }
    const other = await get(server(), `/v1/pets/${id}`, { ...auth, 'if-none-match': '"other"' });
    expect(other.status).toBe(200);
    expect(other.bytes.equals(first.bytes)).toBe(true);
    expect(byRoute()).toBe(fastPath ? 0 : 5);
  });

  it('gives a new tag once a create changes the page, and a 200 to the old one', async () => {
    const { key } = await server().createKey('business');
    const auth = { authorization: `Bearer ${key}` };
    await createPet(server(), key, petBody('Before', 'available'));
    const path = '/v1/pets?status=available&limit=100';
    const before = await get(server(), path, auth);
    expect(before.status).toBe(200);
    const again = await get(server(), path, {
      ...auth,
      'if-none-match': before.headers.etag ?? '',
    });
    expect(again.status).toBe(304);

    await createPet(server(), key, petBody('After', 'available'));
    const after = await get(server(), path, {
      ...auth,
      'if-none-match': before.headers.etag ?? '',
    });
    expect(after.status).toBe(200);
    expect(after.bytes.toString()).toContain('"name":"After"');
    expect(after.headers.etag).not.toBe(before.headers.etag);
    const revalidated = await get(server(), path, {
      ...auth,
      'if-none-match': after.headers.etag ?? '',
    });
    expect(revalidated.status).toBe(304);
  });

  it('sends bodies of 1 KiB or more compressed as Accept-Encoding allows, each coding its own tag, decoding to the identity bytes', async () => {
    const { key } = await server().createKey('business');
    const auth = { authorization: `Bearer ${key}` };
    for (let i = 0; i < 25; i++) await createPet(server(), key, petBody(`Packed ${i}`, 'sold'));
    const path = '/v1/pets?status=sold&limit=100';
    const identity = await get(server(), path, auth);
    expect(identity.bytes.length).toBeGreaterThanOrEqual(1024);
    expect(identity.bytes.toString()).toContain(`"categoryId":${INT64_CATEGORY}`);
    expect(identity.headers['content-encoding']).toBeUndefined();
    const etag = identity.headers.etag ?? '';

    // On SQLite the fast path reads the page itself; elsewhere an uncached page is the route's.
    const byRoute = routeCalls(server());
    const decode = { br: brotliDecompressSync, gzip: gunzipSync };
    const cases: Array<[string, 'br' | 'gzip' | undefined]> = [
      ['gzip, br', 'br'],
      ['gzip', 'gzip'],
      ['br;q=0.5, gzip', 'gzip'],
      ['gzip;q=0.2, br;q=0.9, identity;q=0.1', 'br'],
      ['*', 'br'],
      ['identity', undefined],
      ['gzip;q=0, br;q=0', undefined],
      // Nothing acceptable: the answer as it is, never a 406.
      ['identity;q=0', undefined],
      ['', undefined],
    ];
    for (const [acceptEncoding, coding] of cases) {
      // Twice: the second is the representation made once and kept beside the cached answer.
      for (let round = 0; round < 2; round++) {
        const answer = await get(server(), path, { ...auth, 'accept-encoding': acceptEncoding });
        expect(answer.status).toBe(200);
        expect(answer.headers['content-encoding'], acceptEncoding).toBe(coding);
        expect(answer.headers.vary).toBe('Accept-Encoding');
        expect(Number(answer.headers['content-length'])).toBe(answer.bytes.length);
        const decoded = coding === undefined ? answer.bytes : decode[coding](answer.bytes);
        expect(decoded.equals(identity.bytes), acceptEncoding).toBe(true);
        expect(answer.headers.etag).toBe(
          coding === undefined ? etag : `${etag.slice(0, -1)}-${coding}"`,
        );
        if (coding !== undefined) expect(answer.bytes.length).toBeLessThan(identity.bytes.length);
      }
    }

    if (fastPath && TEST_BACKEND === 'sqlite') expect(byRoute()).toBe(0);

    // The tag names the representation: the gzip one revalidates gzip, not identity.
    const gzipTag = `${etag.slice(0, -1)}-gzip"`;
    const gzipped = { ...auth, 'accept-encoding': 'gzip' };
    const notModified = await get(server(), path, { ...gzipped, 'if-none-match': gzipTag });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.etag).toBe(gzipTag);
    const stale = await get(server(), path, { ...gzipped, 'if-none-match': etag });
    expect(stale.status).toBe(200);
    expect(stale.headers['content-encoding']).toBe('gzip');
  });

  it('sends a small body as it is, unless identity is refused', async () => {
    const { key } = await server().createKey('business');
    const auth = { authorization: `Bearer ${key}` };
    const id = await createPet(server(), key, petBody('Small', 'pending'));
    const identity = await get(server(), `/v1/pets/${id}`, auth);
    expect(identity.bytes.length).toBeLessThan(1024);
    const small = await get(server(), `/v1/pets/${id}`, { ...auth, 'accept-encoding': 'gzip, br' });
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.bytes.equals(identity.bytes)).toBe(true);
    const refused = await get(server(), `/v1/pets/${id}`, {
      ...auth,
      'accept-encoding': 'gzip, identity;q=0',
    });
    expect(refused.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(refused.bytes).equals(identity.bytes)).toBe(true);
  });
});

describe('the tag of an answer', () => {
  it('is the same from two instances for the same page and pet, in every coding', async () => {
    const { key } = await fast().createKey('business');
    for (let i = 0; i < 20; i++) await createPet(fast(), key, petBody(`Shared ${i}`, 'sold'));
    const id = await createPet(fast(), key, petBody('Shared pet', 'sold'));
    const auth = { authorization: `Bearer ${key}` };
    // A limit no other test asks for: neither instance has the page cached.
    for (const path of ['/v1/pets?status=sold&limit=37', `/v1/pets/${id}`]) {
      for (const acceptEncoding of ['', 'gzip', 'br']) {
        const headers = { ...auth, 'accept-encoding': acceptEncoding };
        const [one, two] = [
          await get(fast(), path, headers),
          await get(framework(), path, headers),
        ];
        expect([one.status, two.status]).toEqual([200, 200]);
        expect(one.headers.etag).toBeDefined();
        expect(two.headers.etag, `${path} ${acceptEncoding}`).toBe(one.headers.etag);
        const other = await get(framework(), path, {
          ...headers,
          'if-none-match': one.headers.etag ?? '',
        });
        expect(other.status).toBe(304);
      }
    }
  });
});
