import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KEY_PATTERN, lines } from './cli-harness.js';
import { testRunEnv } from '../helpers/test-run.js';

const REPO_ROOT = new URL('../../', import.meta.url).pathname;
const BIN = 'dist/cli/main.js';
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDatabaseUrl(): string {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-cli-'));
  dirs.push(dir);
  return `sqlite:${join(dir, 'petstore.db')}`;
}

/** Runs a command as a user would, with only the environment a shell would pass. */
function run(command: string, args: string[], databaseUrl: string) {
  const result = spawnSync(command, args, {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...testRunEnv(),
      DATABASE_URL: databaseUrl,
    },
    encoding: 'utf8',
    // Generous: killing npm while it works can leave its cache broken for later runs.
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function petstore(databaseUrl: string, ...args: string[]) {
  return run('node', [BIN, ...args], databaseUrl);
}

describe('the petstore binary, run as a user runs it', () => {
  beforeAll(() => {
    if (!existsSync(join(REPO_ROOT, BIN))) {
      throw new Error(`${BIN} is missing: build first (npm run build)`);
    }
  });

  it("exits with the command's status soon after it ends, even when a connection is left open", () => {
    // A listening socket opened before the CLI starts (given through --import), as a connection
    // that never finishes closing would be: without the exit grace, the command never ends.
    const listen = 'import net from "node:net"; net.createServer().listen(0, "127.0.0.1");';
    const started = Date.now();
    const result = spawnSync(
      'node',
      [`--import=data:text/javascript,${encodeURIComponent(listen)}`, BIN, 'keys', 'list'],
      {
        cwd: REPO_ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          ...testRunEnv(),
          DATABASE_URL: tempDatabaseUrl(),
        },
        encoding: 'utf8',
        timeout: 20_000,
      },
    );
    expect(result.signal).toBeNull();
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/No API keys yet/);
    expect(result.stderr).toMatch(
      /a connection was still open 2 s after the command ended; exiting/,
    );
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('creates a key, lists it without the key, and revokes it', () => {
    const db = tempDatabaseUrl();

    const created = petstore(db, 'keys', 'create', '--plan', 'pro', '--name', 'e2e');

    expect(created.code).toBe(0);
    expect(lines(created.stdout)).toHaveLength(1);
    const key = lines(created.stdout).at(-1) ?? '';
    expect(key).toMatch(KEY_PATTERN);
    const id = /key_[0-9A-Za-z]+/.exec(created.stderr)?.[0] ?? 'no id on stderr';

    const listed = petstore(db, 'keys', 'list');

    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain(`${key.slice(0, 12)}…`);
    expect(listed.stdout).not.toContain(key);
    expect(listed.stdout).toContain('"e2e"');

    const revoked = petstore(db, 'keys', 'revoke', id);

    expect(revoked.code).toBe(0);
    expect(revoked.stderr).toContain('within 5 seconds');
    expect(petstore(db, 'keys', 'list').stdout).toMatch(/revoked \d{4}-/);
  });

  it('exits 2 with one line naming the problem for a bad argument', () => {
    const result = petstore(tempDatabaseUrl(), 'keys', 'create', '--plan', 'gold');

    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(lines(result.stderr)).toEqual([
      'petstore keys create: --plan must be one of free, pro, business, enterprise (got "gold"); see petstore keys create --help',
    ]);
  });

  it('exits 1 naming DATABASE_URL when it is not a database the service knows', () => {
    const result = petstore('mysql://localhost/pets', 'keys', 'list');

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('DATABASE_URL must be');
  });

  it('works as npm run petstore from the clone, as the README shows it', () => {
    const db = tempDatabaseUrl();

    // Through npm, without npx's cache: the first npx in a fresh clone spends seconds filling it.
    const created = run('npm', ['run', 'petstore', '--', 'keys', 'create', '--plan', 'free'], db);
    const help = run('npm', ['run', '--silent', 'petstore', '--', 'help'], db);

    expect(created.code).toBe(0);
    // npm prints the command it runs first; the key is the last line, as `| tail -n 1` takes it.
    expect(lines(created.stdout).at(-1)).toMatch(KEY_PATTERN);
    expect(created.stdout.match(/pa_live_/g)).toHaveLength(1);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: petstore <command> [options]');
  });

  it('is the package bin that npx --no petstore runs: an executable with a node shebang', () => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
      scripts: Record<string, string>;
    };
    expect(manifest.bin.petstore).toBe(BIN);
    expect(manifest.scripts.petstore).toBe(`node ${BIN}`);
    expect(readFileSync(join(REPO_ROOT, BIN), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
    expect(() => accessSync(join(REPO_ROOT, BIN), constants.X_OK)).not.toThrow();

    // Run as npx runs it: the file itself, by its shebang.
    const help = run(join(REPO_ROOT, BIN), ['help'], tempDatabaseUrl());

    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: petstore <command> [options]');
  });
});
