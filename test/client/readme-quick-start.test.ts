import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { transform } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { useServer } from '../helpers/test-server.js';

const server = useServer();

/** The quick start of docs/client.md (linked from the README), as a reader would paste it. */
function quickStart(): string {
  const guide = readFileSync(new URL('../../docs/client.md', import.meta.url), 'utf8');
  const start = guide.indexOf('### Quick start');
  if (start < 0) throw new Error('docs/client.md has no ### Quick start');
  const match = /```ts\n([^]*?)```/.exec(guide.slice(start));
  if (!match?.[1]) throw new Error('docs/client.md has no ts block under ### Quick start');
  return match[1];
}

describe('the client quick start of docs/client.md', () => {
  it('is at most ten lines and runs as written against the service', async () => {
    const source = quickStart();
    expect(source.trimEnd().split('\n').length).toBeLessThanOrEqual(10);
    const s = server();
    const { key } = await s.createKey('pro');
    const { code } = await transform(source.replaceAll('http://127.0.0.1:8080', s.url), {
      loader: 'ts',
      format: 'esm',
    });
    // Inside the repository, so `@pet-adoption/client` resolves to the workspace package.
    const dir = new URL('../../build/readme/', import.meta.url);
    mkdirSync(dir, { recursive: true });
    const file = new URL('quick-start.mjs', dir);
    writeFileSync(file, code);
    const lines: unknown[][] = [];
    const log = console.log;
    const error = console.error;
    console.log = (...args: unknown[]) => void lines.push(args);
    console.error = (...args: unknown[]) => void lines.push(['error', ...args]);
    process.env.KEY = key;
    try {
      await import(`${file.href}?${Date.now()}`);
    } finally {
      console.log = log;
      console.error = error;
      delete process.env.KEY;
    }
    expect(lines).toContainEqual([expect.any(Number), 'Rex']);
    expect(lines).toContainEqual([
      'error',
      'name must be 1 to 100 characters, not blank, without control characters',
    ]);
  });
});

describe('the curl cookbook (docs/curl-cookbook.md)', () => {
  it('shows every operation and every error code', async () => {
    const { ERRORS } = await import('../../src/http/errors/error-table.js');
    const cookbook = readFileSync(new URL('../../docs/curl-cookbook.md', import.meta.url), 'utf8');
    for (const operation of ['createPet', 'listPets', 'getPet'])
      expect(cookbook).toContain(operation);
    for (const [code, { status }] of Object.entries(ERRORS)) {
      expect(cookbook, code).toContain(`\`${code}\` (${status})`);
    }
  });
});
