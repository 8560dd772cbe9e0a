import { describe, expect, it, vi } from 'vitest';
import {
  EVERY_ANSWER_HEADERS,
  revalidatedHeadersFor,
} from '../../src/http/answers/response-headers.js';
import { rawConnect } from '../helpers/raw-http.js';
import { call, useServer } from '../helpers/test-server.js';

/**
 * One table of the headers every answer carries (src/http/answers/response-headers.ts), written by
 * all three writers: a refusal written straight to the socket (431), an answer of the fast path
 * (200), and Fastify's answers (a 400, a 404 under /v1, a 201).
 */
const server = useServer({ logLevel: 'info', logLines: [] });

const TABLE = Object.entries(EVERY_ANSWER_HEADERS);
/** The answers of listPets and getPet, which may be revalidated, carry it so changed. */
const REVALIDATED = Object.entries(revalidatedHeadersFor(EVERY_ANSWER_HEADERS));

/** The table's headers as an answer carries them (names lower-case). */
const tableOf = (
  get: (name: string) => string | null | undefined,
  table: Array<[string, string]> = TABLE,
) => table.map(([name]) => [name, get(name) ?? null]);

describe('the headers of every answer', () => {
  it('are the same on a 431 refusal, a fast-path 200, a Fastify 400, 404 and 201', async () => {
    const { key } = await server().createKey('pro');
    await server().services.cache.start();
    const created = await call(server(), 'POST', '/v1/pets', {
      key,
      body: { name: 'Headers', categoryId: 2 },
    });
    const id = (created.body as { id: number }).id;
    // The route caches it.
    const fastify200 = await call(server(), 'GET', `/v1/pets/${id}`, { key });

    const routes = vi.spyOn(server().services.cache, 'pet');
    const fastPath200 = await call(server(), 'GET', `/v1/pets/${id}`, { key });
    expect(routes).not.toHaveBeenCalled();
    routes.mockRestore();
    const fastify400 = await call(server(), 'GET', '/v1/pets?limit=0', { key });
    const fastify404 = await call(server(), 'GET', '/v1/nowhere', { key });

    const big = 'x'.repeat(20 * 1024);
    const raw = await rawConnect(
      server().url,
      `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`,
    );
    const refused431 = await raw.response();
    raw.socket.destroy();

    expect([created.status, fastPath200.status, fastify400.status, fastify404.status]).toEqual([
      201, 200, 400, 404,
    ]);
    expect(refused431.status).toBe(431);
    const expected = TABLE;
    for (const answer of [fastPath200, fastify200]) {
      expect(tableOf((name) => answer.headers.get(name), REVALIDATED)).toEqual(REVALIDATED);
    }
    for (const answer of [created, fastify400, fastify404]) {
      expect(tableOf((name) => answer.headers.get(name))).toEqual(expected);
      expect(answer.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(tableOf((name) => refused431.headers[name])).toEqual(expected);
    expect(refused431.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
