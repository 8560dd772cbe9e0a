import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { runCli } from '../../src/cli/run-cli.js';
import { createStorage } from '../../src/storage/create-storage.js';
import {
  REPO_ROOT,
  spawnServer,
  tempDatabaseUrl,
  type ServerProcess,
} from '../helpers/server-process.js';

function captured() {
  let text = '';
  return { write: (chunk: string) => (text += chunk), text: () => text };
}

async function petstore(databaseUrl: string, ...argv: string[]) {
  const stdout = captured();
  const stderr = captured();
  const code = await runCli(argv, {
    stdout,
    stderr,
    config: loadConfig({ DATABASE_URL: databaseUrl }),
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

const KEY = /^pa_live_[0-9A-Za-z]{36}$/;

describe('petstore keys', () => {
  it('prints the key alone on the last stdout line, and the rest on stderr', async () => {
    const result = await petstore(
      tempDatabaseUrl(),
      'keys',
      'create',
      '--plan',
      'pro',
      '--name',
      'shop',
    );
    expect(result.code).toBe(0);
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stdout.trim()).toMatch(KEY);
    expect(result.stderr).toContain('pro, 300/min 10000/day');
  });

  it('lists keys by id, label, plan, prefix and state, never the key itself', async () => {
    const db = tempDatabaseUrl();
    const key = (
      await petstore(db, 'keys', 'create', '--plan', 'free', '--name', 'mine')
    ).stdout.trim();
    const listed = await petstore(db, 'keys', 'list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(key.slice(0, 12));
    expect(listed.stdout).not.toContain(key);
    expect(listed.stdout).toMatch(
      /key_\w+ {2}"mine" {2}free 60\/min 1000\/day {2}pa_live_\w{4}… {2}active/,
    );
  });

  it('creates enterprise keys with their own limits, and refuses them without', async () => {
    const db = tempDatabaseUrl();
    const ok = await petstore(
      db,
      'keys',
      'create',
      '--plan',
      'enterprise',
      '--per-minute',
      '5000',
      '--per-day',
      '900000',
    );
    expect(ok.code).toBe(0);
    expect((await petstore(db, 'keys', 'list')).stdout).toContain('enterprise 5000/min 900000/day');
    const missing = await petstore(db, 'keys', 'create', '--plan', 'enterprise');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('--per-minute and --per-day');
    const wrongPlan = await petstore(
      db,
      'keys',
      'create',
      '--plan',
      'free',
      '--per-minute',
      '5',
      '--per-day',
      '9',
    );
    expect(wrongPlan.code).toBe(1);
  });

  it('revokes and unbans by id, and exits 1 for an unknown id', async () => {
    const db = tempDatabaseUrl();
    await petstore(db, 'keys', 'create', '--plan', 'free');
    const id = /key_\w+/.exec((await petstore(db, 'keys', 'list')).stdout)?.[0] ?? '';
    expect((await petstore(db, 'keys', 'unban', id)).code).toBe(0);
    expect((await petstore(db, 'keys', 'revoke', id)).code).toBe(0);
    expect((await petstore(db, 'keys', 'list')).stdout).toMatch(/revoked \d{4}-/);
    const unknown = await petstore(db, 'keys', 'revoke', 'key_missing');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no key has id key_missing');
    expect((await petstore(db, 'keys', 'unban', 'key_missing')).code).toBe(1);
  });

  it.each([
    [['keys', 'create'], '--plan must be one of'],
    [['keys', 'create', '--plan', 'gold'], '--plan must be one of'],
    [['keys', 'create', '--plan', 'free', '--colour', 'red'], "Unknown option '--colour'"],
    [['keys', 'create', '--plan'], "Option '--plan"],
    [['keys', 'revoke'], 'exactly one key id'],
    [['keys', 'revoke', 'a', 'b'], 'exactly one key id'],
    [['seed'], 'seed needs --count N'],
    [['seed', '--count', 'ten'], '--count must be an integer from 1 to 1000000'],
    [['seed', '--count', '0'], '--count must be an integer'],
    [['fly'], 'unknown command "fly"'],
  ])('exits 1 with a one-line reason for %j', async (argv, message) => {
    const result = await petstore(tempDatabaseUrl(), ...argv);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('--help');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stdout).toBe('');
  });

  it.each([
    ['--help'],
    ['help'],
    ['keys', 'create', '--help'],
    ['keys', 'list', '-h'],
    ['seed', '--help'],
    ['migrate', '--help'],
  ])('prints usage and exits 0 for %j', async (...argv) => {
    const result = await petstore(tempDatabaseUrl(), ...argv);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Usage: petstore/);
  });
});

describe('petstore seed and migrate', () => {
  it('inserts the number of pets asked for, some without status', async () => {
    const db = tempDatabaseUrl();
    const result = await petstore(db, 'seed', '--count', '2500');
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Inserted 2500 pets');
    const storage = await createStorage(loadConfig({ DATABASE_URL: db }).database);
    try {
      const pets = await storage.pets.list({ afterId: 0, limit: 10_000 });
      expect(pets).toHaveLength(2500);
      expect(pets.some((p) => !('status' in p))).toBe(true);
    } finally {
      await storage.close();
    }
  });

  it('applies migrations once, then reports the database up to date', async () => {
    const db = tempDatabaseUrl();
    const first = await petstore(db, 'migrate');
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('applied 2026-11-22-01-pets');
    expect((await petstore(db, 'migrate')).stderr).toContain('up to date');
  });
});

describe('the petstore binary, as a user runs it', () => {
  let server: ServerProcess | undefined;
  afterEach(() => {
    if (server?.child.exitCode === null) server.child.kill('SIGKILL');
  });

  it('creates a key with npx --no petstore that the running server accepts', async () => {
    const db = tempDatabaseUrl();
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: db };
    const created = spawnSync(
      'npx',
      ['--no', 'petstore', 'keys', 'create', '--plan', 'pro', '--name', 'e2e'],
      {
        cwd: REPO_ROOT,
        env,
        encoding: 'utf8',
      },
    );
    expect(created.status).toBe(0);
    const key = created.stdout.trimEnd().split('\n').at(-1) ?? '';
    expect(key).toMatch(KEY);
    server = await spawnServer({ DATABASE_URL: db });
    expect(server.output()).not.toContain('pa_live_');
    const res = await fetch(`${server.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'From the CLI', categoryId: 1 }),
    });
    expect(res.status).toBe(201);
    const id = /key_\w+/.exec(
      spawnSync('node', ['dist/cli/main.js', 'keys', 'list'], {
        cwd: REPO_ROOT,
        env,
        encoding: 'utf8',
      }).stdout,
    )?.[0];
    expect(id).toBeDefined();
    const revoked = spawnSync('node', ['dist/cli/main.js', 'keys', 'revoke', id ?? ''], {
      cwd: REPO_ROOT,
      env,
      encoding: 'utf8',
    });
    expect(revoked.status).toBe(0);
  });
});
