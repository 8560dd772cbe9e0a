import { execFile } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BatchedLogStream } from '../../src/telemetry/logging/batched-log-stream.js';

const run = promisify(execFile);
const folders: string[] = [];

function tempFile(): string {
  const folder = mkdtempSync(join(tmpdir(), 'petstore-log-'));
  folders.push(folder);
  return join(folder, 'log');
}

afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe('the batched log stream', () => {
  it('writes the lines logged within maxDelayMs together, in order, once it has passed', () => {
    vi.useFakeTimers();
    const path = tempFile();
    const fd = openSync(path, 'w');
    try {
      const stream = new BatchedLogStream(fd, { maxDelayMs: 10, maxBytes: 1024 });
      stream.write('{"n":1}\n');
      vi.advanceTimersByTime(9);
      stream.write('{"n":2}\n');
      expect(readFileSync(path, 'utf8')).toBe('');
      vi.advanceTimersByTime(1);
      expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n{"n":2}\n');
      stream.write('{"n":3}\n');
      stream.flushSync();
      expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n{"n":2}\n{"n":3}\n');
    } finally {
      closeSync(fd);
      vi.useRealTimers();
    }
  });

  it('writes at once when maxBytes wait', () => {
    vi.useFakeTimers();
    const path = tempFile();
    const fd = openSync(path, 'w');
    try {
      const stream = new BatchedLogStream(fd, { maxDelayMs: 10, maxBytes: 16 });
      stream.write('{"n":1}\n');
      expect(readFileSync(path, 'utf8')).toBe('');
      stream.write('{"n":2}\n');
      expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n{"n":2}\n');
    } finally {
      closeSync(fd);
      vi.useRealTimers();
    }
  });

  it('writes what is pending when the process exits in the same turn', async () => {
    const module = new URL('../../src/telemetry/logging/batched-log-stream.ts', import.meta.url)
      .pathname;
    const script = `
      import { BatchedLogStream } from ${JSON.stringify(module)};
      const stream = new BatchedLogStream(1);
      stream.write('first\\n');
      stream.write('last\\n');
      process.exit(0);
    `;
    const { stdout } = await run(
      process.execPath,
      ['--experimental-strip-types', '--input-type=module', '-e', script],
      { env: { PATH: process.env.PATH ?? '' } },
    );
    expect(stdout).toBe('first\nlast\n');
  });
});
