import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { petstore } from './cli-harness.js';

let dir: string | undefined;
afterEach(() => {
  vi.unstubAllEnvs();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A database path whose parent is a regular file: opening it fails on every platform. */
function unopenableDatabaseUrl(): string {
  dir = mkdtempSync(join(tmpdir(), 'petstore-cli-'));
  const file = join(dir, 'not-a-directory');
  writeFileSync(file, '');
  return `sqlite:${join(file, 'petstore.db')}`;
}

describe('petstore when something else goes wrong', () => {
  it('prints the message without a stack and exits 1 when the database cannot be opened', async () => {
    const result = await petstore(unopenableDatabaseUrl(), ['keys', 'list']);

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^petstore keys list: failed: .+\n$/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('prints the stack when LOG_LEVEL is debug', async () => {
    const result = await petstore(unopenableDatabaseUrl(), ['keys', 'list'], {
      LOG_LEVEL: 'debug',
    });

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/\n\s+at /);
  });

  it('prints a bad setting, named, and exits 1', async () => {
    vi.stubEnv('DATABASE_URL', 'mysql://localhost/pets');
    let stdout = '';
    let stderr = '';

    const code = await runCli(['keys', 'list'], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    });

    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      'petstore: DATABASE_URL must be sqlite:<path> or a URL (postgres: or postgresql:) (got "mysql://localhost/pets")\n',
    );
  });
});
