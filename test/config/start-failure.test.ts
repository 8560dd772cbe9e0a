import { createServer, type Server } from 'node:net';
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { describeStartFailure } from '../../src/start-failure.js';
import { REPO_ROOT, tempDatabaseUrl } from '../helpers/server-process.js';

describe('a failed start says what failed, why, and what to do', () => {
  it('names every attempt of an AggregateError (empty message) and what to check', () => {
    const attempt = (address: string) =>
      Object.assign(new Error(`connect ECONNREFUSED ${address}:5432`), {
        code: 'ECONNREFUSED',
        port: 5432,
      });
    const error = new AggregateError([attempt('::1'), attempt('127.0.0.1')], '');
    const config = loadConfig({ DATABASE_URL: 'postgres://u:secret-pw@localhost/db' });
    const report = describeStartFailure(error, config);
    expect(report).toContain(
      'petstore: failed to start: connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432',
    );
    expect(report).toContain(
      '  what to do: nothing answered at 5432: is PostgreSQL (DATABASE_URL)',
    );
    expect(report).not.toContain('secret-pw');
  });

  it('follows the causes of a wrapped error', () => {
    const cause = Object.assign(new Error('password authentication failed for user "u"'), {
      code: '28P01',
    });
    const report = describeStartFailure(new Error('cannot open the database', { cause }));
    expect(report).toContain('  because: password authentication failed for user "u" (28P01)');
    expect(report).toContain('what to do: PostgreSQL refused the user or password');
  });

  const servers: Server[] = [];
  afterAll(() => {
    for (const server of servers) server.close();
  });

  it('a port taken by another process: the process exits 1 naming the port and what to do', async () => {
    const taken = createServer();
    servers.push(taken);
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    const child = spawn('node', ['dist/main.js'], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        PORT: String(port),
        DATABASE_URL: tempDatabaseUrl(),
        PETSTORE_BOOTSTRAP_KEY: 'off',
        DRAIN_SECONDS: '0',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const deadline = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearTimeout(deadline);
    expect(code).toBe(1);
    expect(stderr).toContain('petstore: failed to start:');
    expect(stderr).toContain('EADDRINUSE');
    expect(stderr).toContain(`what to do: another process listens on port ${port}`);
  });
});
