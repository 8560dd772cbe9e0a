import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testRunEnv } from '../helpers/test-run.js';

/**
 * The server's log destination (stdoutDestination): lines wait to be written together, as bytes,
 * and none is lost or held back. Each case runs the built logger in a process of its own, its
 * standard output a pipe, as a supervisor or container runtime reads it.
 */
const LOGGER = join(import.meta.dirname, '..', '..', 'dist', 'telemetry', 'logging', 'logger.js');

/** A script that logs `count` lines through the server's logger, then does `then`. */
function script(count: number, then: string): string {
  return [
    `import { createLogger } from ${JSON.stringify(LOGGER)};`,
    `const logger = createLogger({ level: 'info', secrets: ['hunter2-secret'] });`,
    `for (let i = 0; i < ${count}; i++) logger.info({ i, pet: 'Zoë 🐕 ' + 'x'.repeat(i % 50) }, 'line');`,
    then,
  ].join('\n');
}

interface Line {
  i: number;
  pet: string;
  msg: string;
}

const parsed = (text: string): Line[] =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Line);

describe('the log destination', () => {
  it('writes every line, whole and in order, when the process exits with lines still waiting', () => {
    // 3,001 lines: many batches, and the last one still below the batch size at exit.
    const run = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', script(3_001, 'process.exit(0);')],
      { encoding: 'utf8', env: { ...process.env, ...testRunEnv() }, timeout: 30_000 },
    );
    expect(run.status).toBe(0);
    const lines = parsed(run.stdout);
    expect(lines.map((line) => line.i)).toEqual(Array.from({ length: 3_001 }, (_, i) => i));
    // Written as UTF-8 bytes: a name outside ASCII reads back as it was logged.
    expect(lines[7]?.pet).toBe(`Zoë 🐕 ${'x'.repeat(7)}`);
  });

  it('writes a line of an idle process without waiting for others to fill a batch', async () => {
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', script(1, 'setTimeout(() => {}, 15_000);')],
      { env: { ...process.env, ...testRunEnv() }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      // The line arrives while the process still runs: the periodic flush wrote it.
      const first = await new Promise<string>((resolve, reject) => {
        let text = '';
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (chunk: string) => {
          text += chunk;
          if (text.includes('\n')) resolve(text);
        });
        child.once('exit', (code) => reject(new Error(`exited (${String(code)}) before a line`)));
      });
      expect(parsed(first)).toEqual([expect.objectContaining({ i: 0, msg: 'line' })]);
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('makes no write while nothing waits: an idle process is not woken to write nothing', () => {
    // Counts the writes to standard output for five flush periods of a logger that logs nothing.
    const counting = [
      `import fs from 'node:fs';`,
      `const write = fs.writeSync;`,
      `let writes = 0;`,
      `fs.writeSync = (fd, ...rest) => { if (fd === 1) writes++; return write.call(fs, fd, ...rest); };`,
      `const { createLogger, LOG_FLUSH_MS } = await import(${JSON.stringify(LOGGER)});`,
      `createLogger({ level: 'info' });`,
      `setTimeout(() => { process.stderr.write(String(writes)); process.exit(0); }, 5.5 * LOG_FLUSH_MS);`,
    ].join('\n');
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', counting], {
      encoding: 'utf8',
      env: { ...process.env, ...testRunEnv() },
      timeout: 30_000,
    });
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('0');
    expect(run.stdout).toBe('');
  });

  it('still masks a secret in a line written as bytes', () => {
    const run = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        script(0, "logger.warn({ url: 'postgres://u:hunter2-secret@db/x' }, 'driver said');"),
      ],
      { encoding: 'utf8', env: { ...process.env, ...testRunEnv() }, timeout: 30_000 },
    );
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('driver said');
    expect(run.stdout).not.toContain('hunter2-secret');
  });
});
