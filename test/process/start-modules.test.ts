import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runPetstore } from '../helpers/instances.js';
import { spawnServer, tempDatabaseUrl, type ServerProcess } from '../helpers/server-process.js';

/*
 * What a server start and a CLI command load, seen through module.registerHooks (the hook of
 * test/telemetry/loaded-modules.mjs, given with --import): resolving and linking modules is most
 * of a start's CPU, so modules needed later or never are loaded at first need
 * (docs/development.md). A module imported eagerly again fails here.
 */
const LOADED_MODULES_HOOK = new URL('../telemetry/loaded-modules.mjs', import.meta.url).pathname;

const folders: string[] = [];
const running: ServerProcess[] = [];
afterAll(() => {
  for (const server of running.splice(0))
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A file the hook writes the loaded modules' URLs to when the process exits, and its reader. */
function moduleList(): { env: Record<string, string>; read: () => string[] } {
  const folder = mkdtempSync(join(tmpdir(), 'petstore-start-modules-'));
  folders.push(folder);
  const list = join(folder, 'loaded.txt');
  return {
    env: { NODE_OPTIONS: `--import=${LOADED_MODULES_HOOK}`, PETSTORE_TEST_LOADED_MODULES: list },
    read: () => readFileSync(list, 'utf8').split('\n'),
  };
}

/** The package of a module URL (`@scope/name` or `name`), the service's own files as `dist`. */
function packageOf(url: string): string | undefined {
  const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (match) return match[1];
  return url.includes('/dist/') ? 'dist' : undefined;
}

function packages(urls: readonly string[]): Set<string> {
  return new Set(urls.map(packageOf).filter((name) => name !== undefined));
}

/** Starts the built server with the hook and stops it. */
async function modulesOfServer(env: Record<string, string>): Promise<string[]> {
  const modules = moduleList();
  const server = await spawnServer({
    DATABASE_URL: tempDatabaseUrl(),
    PETSTORE_BOOTSTRAP_KEY: 'off',
    ...modules.env,
    ...env,
  });
  running.push(server);
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
  return modules.read();
}

/** Fastify's Ajv validator compiler, unused: the service brings its own (base-app.ts). */
const AJV_COMPILER = '@fastify/ajv-compiler';

describe('a server start', () => {
  it('loads neither the Ajv compiler of Fastify nor the admin and ops apps it is not configured for', async () => {
    const modules = await modulesOfServer({});
    const loaded = packages(modules);
    // The hook saw the server's own modules and its dependencies: an empty list proves nothing.
    expect(loaded).toContain('dist');
    expect(loaded).toContain('fastify');
    expect(loaded).not.toContain(AJV_COMPILER);
    expect(modules.filter((url) => url.includes('/ajv/dist/jtd'))).toEqual([]);
    expect(modules.filter((url) => /\/apps\/(admin|ops)\/(admin|ops)-app\.js$/.test(url))).toEqual(
      [],
    );
  }, 120_000);
});

describe('a CLI command', () => {
  it('that opens no storage (help, a usage error) loads no services, metrics or storage driver', async () => {
    for (const args of [['--help'], ['keys', 'create', '--no-such-option']]) {
      const modules = moduleList();
      const run = await runPetstore({ DATABASE_URL: tempDatabaseUrl(), ...modules.env }, args);
      expect(run.code, run.stderr).toBe(args[0] === '--help' ? 0 : 2);
      const urls = modules.read();
      expect(packages(urls)).toEqual(new Set(['dist']));
      expect(urls.filter((url) => url.endsWith('/dist/services.js'))).toEqual([]);
    }
  });

  it('that opens storage loads no metrics: it reports none', async () => {
    const modules = moduleList();
    const run = await runPetstore({ DATABASE_URL: tempDatabaseUrl(), ...modules.env }, [
      'keys',
      'list',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const loaded = packages(modules.read());
    expect(loaded).toContain('kysely');
    expect(loaded).not.toContain('prom-client');
    expect(loaded).not.toContain('@opentelemetry/api');
  });
});
