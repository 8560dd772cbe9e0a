import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, REPO_ROOT, tempDatabaseUrl } from '../helpers/server-process.js';
import { testRunEnv } from '../helpers/test-run.js';

const run = promisify(execFile);

/**
 * The production install as README describes it: scripts/release.sh builds a release directory
 * and installs it with `npm ci --omit=dev`; the release's own `npm start` and CLI must then work
 * with no dev dependency present. It takes the dist/ that `npm test` built (--prebuilt) and npm's
 * cache, so it installs without compiling or downloading.
 */
describe('the production install (scripts/release.sh)', () => {
  const work = mkdtempSync(join(tmpdir(), 'petstore-release-'));
  const release = join(work, 'release');
  let server: ChildProcess | undefined;

  afterAll(() => {
    if (server && server.exitCode === null) server.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  });

  it('builds a release without dev dependencies that serves, takes a key from its own CLI and stops on SIGTERM', async () => {
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...testRunEnv() };
    await run('bash', [join(REPO_ROOT, 'scripts/release.sh'), '--prebuilt', release], {
      env,
      timeout: 150_000,
    });

    const manifest = JSON.parse(readFileSync(join(release, 'package.json'), 'utf8')) as {
      version: string;
      scripts: Record<string, string>;
    };
    expect(manifest.scripts.prepare).toBeUndefined();
    expect(existsSync(join(release, 'dist/main.js'))).toBe(true);
    for (const dev of ['typescript', 'vitest', 'eslint', '@types/node']) {
      expect(existsSync(join(release, 'node_modules', dev)), dev).toBe(false);
    }

    const database = { DATABASE_URL: tempDatabaseUrl() };
    const created = await run('node', ['dist/cli/main.js', 'keys', 'create', '--plan', 'pro'], {
      cwd: release,
      env: { ...env, ...database },
    });
    const key = created.stdout.trim().split('\n').at(-1) ?? '';
    expect(key).toMatch(/^pa_live_[0-9A-Za-z]{36}$/);

    const port = await freePort();
    const child = spawn('npm', ['start', '--silent'], {
      cwd: release,
      env: { ...env, ...database, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server = child;
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );
    const deadline = Date.now() + 60_000;
    while (!output.includes('listening')) {
      if (child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`the release did not start:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const base = `http://127.0.0.1:${port}`;

    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', version: manifest.version });
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);

    const auth = { authorization: `Bearer ${key}` };
    const valid = await fetch(`${base}/v1/pets`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{"name":"Released","categoryId":9007199254740993}',
    });
    const pet = await valid.text();
    expect(valid.status, pet).toBe(201);
    expect(pet).toMatch(/^\{"id":\d+,"name":"Released","categoryId":9007199254740993\}$/);
    const list = await fetch(`${base}/v1/pets`, { headers: auth });
    expect(list.status).toBe(200);
    expect(await list.text()).toContain('"categoryId":9007199254740993');

    child.kill('SIGTERM');
    expect(await exited, output).toBe(0);
  }, 240_000);
});
