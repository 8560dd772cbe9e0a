import { copyFileSync, renameSync, unlinkSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { call, startServer, TEST_BACKEND } from '../helpers/test-server.js';

// SQLite only: the file at DATABASE_URL's path must stay the one the server opened.
describe.skipIf(TEST_BACKEND !== 'sqlite')(
  '/readyz, when the SQLite file under a running server is deleted or replaced',
  () => {
    it.each(['deleted', 'replaced'] as const)(
      'answers 503 unavailable naming the database once the file is %s (200 before)',
      async (fault) => {
        const server = await startServer({ sqliteFile: true });
        try {
          const file = server.databaseFile as string;
          expect((await call(server, 'GET', '/readyz')).status).toBe(200);
          if (fault === 'deleted') unlinkSync(file);
          else {
            copyFileSync(file, `${file}.copy`);
            renameSync(`${file}.copy`, file);
          }
          const res = await call(server, 'GET', '/readyz');
          expect(res.status).toBe(503);
          expect(res.body).toMatchObject({ code: 'unavailable', status: 503 });
          expect(res.headers.get('retry-after')).not.toBeNull();
          expect(JSON.stringify(res.body)).toContain('database');
        } finally {
          await server.close();
        }
      },
    );
  },
);
