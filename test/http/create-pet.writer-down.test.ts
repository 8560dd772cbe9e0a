import { existsSync, renameSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { SqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js';
import { call, TEST_BACKEND, type TestServer, useServer } from '../helpers/test-server.js';

const logLines: string[] = [];
const server = useServer({ sqliteFile: true, logLines });

/** Creates until one is stored, for at most `ms`; the statuses seen on the way. */
async function createUntilStored(s: TestServer, key: string, ms: number): Promise<number[]> {
  const statuses: number[] = [];
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const res = await call(s, 'POST', '/v1/pets', { key, body: { name: 'Back', categoryId: 1 } });
    statuses.push(res.status);
    if (res.status !== 503) return statuses;
    await delay(50);
  }
  return statuses;
}

describe.skipIf(TEST_BACKEND !== 'sqlite')(
  'POST /v1/pets while the SQLite commit worker is down',
  () => {
    it('answers 503 with Retry-After, fails /readyz naming the writer, keeps reads, and recovers by itself', async () => {
      const s = server();
      const { key } = await s.createKey('pro');
      const before = await call(s, 'POST', '/v1/pets', {
        key,
        body: { name: 'Before', categoryId: 1 },
      });
      expect(before.status).toBe(201);
      const file = s.databaseFile as string;

      // The worker dies, and while the file is away every new one fails to open it.
      renameSync(file, `${file}.away`);
      await (s.storage as SqliteStorage).writer.killWorkerForTests();

      const refused = await call(s, 'POST', '/v1/pets', {
        key,
        body: { name: 'Lost', categoryId: 1 },
      });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: 'unavailable' });
      expect(refused.headers.get('retry-after')).toBe('5');
      const ready = await call(s, 'GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.headers.get('retry-after')).toBe('5');
      const failed = logLines.find((line) => line.includes('readiness check failed'));
      expect(failed).toContain('SQLite writer down');
      // Reads do not need the writer.
      const { id } = before.body as { id: number };
      expect((await call(s, 'GET', `/v1/pets/${id}`, { key })).status).toBe(200);

      // Restarts fail meanwhile, and none of them leaves an empty database behind.
      await delay(500);
      expect(existsSync(file)).toBe(false);

      renameSync(`${file}.away`, file);
      const statuses = await createUntilStored(s, key, 15_000);
      expect(statuses.at(-1)).toBe(201);
      expect(statuses.slice(0, -1).every((status) => status === 503)).toBe(true);
      expect((await call(s, 'GET', '/readyz')).status).toBe(200);
    });
  },
);
