import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import {
  REPO_ROOT,
  spawnServer,
  tempDatabaseUrl,
  type ServerProcess,
} from '../helpers/server-process.js';
import { testRunEnv } from '../helpers/test-run.js';

describe('a key made with the petstore binary, used against the running server', () => {
  let server: ServerProcess | undefined;
  afterEach(() => {
    if (server?.child.exitCode === null) server.child.kill('SIGKILL');
  });

  it('is accepted by the server, and refused once revoked with the CLI', async () => {
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...testRunEnv(),
      DATABASE_URL: tempDatabaseUrl(),
    };
    const petstore = (...args: string[]) =>
      spawnSync('node', ['dist/cli/main.js', ...args], { cwd: REPO_ROOT, env, encoding: 'utf8' });
    const created = petstore('keys', 'create', '--plan', 'pro', '--name', 'e2e');
    expect(created.status).toBe(0);
    const key = created.stdout.trimEnd().split('\n').at(-1) ?? '';
    expect(key).toMatch(/^pa_live_[0-9A-Za-z]{36}$/);

    server = await spawnServer({ DATABASE_URL: env.DATABASE_URL });
    // The store already had a key, so the server printed none of its own.
    expect(server.output()).not.toContain('pa_live_');
    const create = () =>
      fetch(`${server?.url}/v1/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'From the CLI', categoryId: 1 }),
      });
    expect((await create()).status).toBe(201);

    const id = /key_\w+/.exec(petstore('keys', 'list').stdout)?.[0] ?? '';
    expect(petstore('keys', 'revoke', id).status).toBe(0);
    // The server caches verified keys for at most 4 seconds; poll rather than assume.
    const deadline = Date.now() + 6_000;
    let status = 201;
    while (status !== 401 && Date.now() < deadline) {
      status = (await create()).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe(401);
  });
});
