import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { runCli } from '../../src/cli/run-cli.js';
import type { Storage } from '../../src/domain/ports.js';
import { createStorage } from '../../src/storage/create-storage.js';

export const KEY_PATTERN = /^pa_live_[0-9A-Za-z]{36}$/;
export const KEY_ID_PATTERN = /key_[0-9A-Za-z]+/;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function collector() {
  let text = '';
  return { write: (chunk: string) => (text += chunk), text: () => text };
}

/** A fresh SQLite file per test, removed after it; call at the top of a test file. */
export function useTempDatabases(): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-cli-'));
    dirs.push(dir);
    return `sqlite:${join(dir, 'petstore.db')}`;
  };
}

/** Runs the CLI in this process against the database, as `DATABASE_URL=... petstore argv`. */
export async function petstore(
  databaseUrl: string,
  argv: string[],
  env: Record<string, string> = {},
  stdin = '',
): Promise<CliResult> {
  const stdout = collector();
  const stderr = collector();
  const code = await runCli(argv, {
    stdout,
    stderr,
    config: loadConfig({ DATABASE_URL: databaseUrl, ...env }),
    env: { DATABASE_URL: databaseUrl, ...env },
    stdin: Readable.from([stdin]),
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** Creates a key through the CLI (with `env` besides DATABASE_URL) and returns it with its id. */
export async function createKey(
  databaseUrl: string,
  args: readonly string[] = ['--plan', 'free'],
  env: Record<string, string> = {},
): Promise<{ key: string; id: string }> {
  const result = await petstore(databaseUrl, ['keys', 'create', ...args], env);
  if (result.code !== 0) throw new Error(`keys create failed: ${result.stderr}`);
  const id = KEY_ID_PATTERN.exec(result.stderr)?.[0];
  if (id === undefined) throw new Error(`no key id in: ${result.stderr}`);
  return { key: result.stdout.trim(), id };
}

/** Opens the same database directly, to arrange or check what the CLI cannot show. */
export async function withStorage<T>(
  databaseUrl: string,
  use: (storage: Storage) => Promise<T>,
): Promise<T> {
  const storage = await createStorage(loadConfig({ DATABASE_URL: databaseUrl }).database, {
    migrate: true,
  });
  try {
    return await use(storage);
  } finally {
    await storage.close();
  }
}

export function lines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}
