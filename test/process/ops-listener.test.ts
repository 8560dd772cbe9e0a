import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUILD_VERSION } from '../../src/build-info.js';
import { freePort, spawnServer, tempDatabaseUrl } from '../helpers/server-process.js';

describe('the built server with OPS_PORT', () => {
  it('says its version and commit in its first log line, and serves operations on OPS_PORT only', async () => {
    const opsPort = await freePort();
    const server = await spawnServer({
      DATABASE_URL: tempDatabaseUrl(),
      OPS_PORT: String(opsPort),
      PETSTORE_BOOTSTRAP_KEY: 'off',
    });
    try {
      const { commit } = JSON.parse(readFileSync('dist/build-info.json', 'utf8')) as {
        commit: string;
      };
      const first = JSON.parse(server.output().split('\n')[0] ?? '') as Record<string, unknown>;
      expect(first).toMatchObject({ version: BUILD_VERSION, commit, node: process.version });
      const opsUrl = `http://127.0.0.1:${opsPort}`;
      // Listening is logged after the public listener starts; the ops one follows it.
      let version: Response | undefined;
      for (let i = 0; i < 100 && version === undefined; i++) {
        version = await fetch(`${opsUrl}/version`).catch(async () => {
          await new Promise((resolve) => setTimeout(resolve, 100));
          return undefined;
        });
      }
      expect(await version?.json()).toEqual({
        version: BUILD_VERSION,
        commit,
        node: process.version,
      });
      expect((await fetch(`${opsUrl}/metrics`)).status).toBe(200);
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
