import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createServices } from '../../src/services.js';
import { petstore, useTempDatabases } from '../cli/cli-harness.js';
import { postgresFor, urlWithSchema, usePostgresSchemas } from '../helpers/postgres.js';
import { REPO_ROOT } from '../helpers/server-process.js';

/**
 * One environment per database (migration 2026-12-02-14-database-environment): the first server or
 * CLI command that migrates records its PETSTORE_ENV, and every process with another refuses with
 * a message naming both. The CLI runs in this process; the server as the built dist/main.js.
 */
const refusal = (recorded: string, running: string) =>
  `this database belongs to PETSTORE_ENV=${recorded}, but this process runs with PETSTORE_ENV=${running}`;

function behaves(name: string, newDatabase: () => Promise<string>) {
  describe(name, () => {
    it('is claimed by the first CLI command; another environment is refused, naming both', async () => {
      const db = await newDatabase();
      const staging = { PETSTORE_ENV: 'staging' };
      expect((await petstore(db, ['keys', 'create', '--plan', 'free'], staging)).code).toBe(0);

      // Without PETSTORE_ENV (production): no pa_live_ key is made in a staging database.
      const create = await petstore(db, ['keys', 'create', '--plan', 'free']);
      expect(create.code).toBe(1);
      expect(create.stdout).toBe('');
      expect(create.stderr).toContain(refusal('staging', 'production'));
      expect(create.stderr).toContain('set PETSTORE_ENV=staging');
      // Commands that do not migrate check too, but do not claim.
      const migrate = await petstore(db, ['migrate']);
      expect(migrate.code).toBe(1);
      expect(migrate.stderr).toContain(refusal('staging', 'production'));

      const list = await petstore(db, ['keys', 'list'], staging);
      expect(list.code).toBe(0);
      expect(list.stdout.match(/pa_test_/g)).toHaveLength(1);
    });

    it('is claimed by a server start, and one claim wins when two race', async () => {
      const db = await newDatabase();
      // `migrate` alone records nothing: a migrate Job without PETSTORE_ENV claims no database.
      expect((await petstore(db, ['migrate'])).code).toBe(0);
      const open = (environment: string) =>
        createServices(loadConfig({ DATABASE_URL: db, PETSTORE_ENV: environment }), {
          migrate: true,
        });
      const results = await Promise.allSettled([open('staging'), open('production')]);
      const opened = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
      try {
        expect(opened).toHaveLength(1);
        expect(refused).toHaveLength(1);
        const winner = opened[0]?.config.environment ?? '';
        const loser = winner === 'staging' ? 'production' : 'staging';
        expect(String(refused[0])).toContain(refusal(winner, loser));
      } finally {
        for (const services of opened) await services.close();
      }
    });
  });
}

const temp = useTempDatabases();
behaves('on SQLite', () => Promise.resolve(temp()));

describe('a server started with another environment', () => {
  it('exits 1 before listening, naming both environments', async () => {
    const db = temp();
    expect((await petstore(db, ['keys', 'create', '--plan', 'free'])).code).toBe(0);
    const child = spawn(process.execPath, [join(REPO_ROOT, 'dist', 'main.js')], {
      env: {
        ...process.env,
        DATABASE_URL: db,
        PETSTORE_ENV: 'staging',
        PORT: String(20_000 + Math.floor(Math.random() * 10_000)),
        LOG_LEVEL: 'silent',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const deadline = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearTimeout(deadline);
    expect(code).toBe(1);
    expect(stderr).toContain(`petstore: failed to start: ${refusal('production', 'staging')}`);
  });
});

const SUITE = 'the database environment on PostgreSQL';
const available = await postgresFor(SUITE);
describe.runIf(available)(SUITE, () => {
  const schemas = usePostgresSchemas();
  behaves('on PostgreSQL', async () => urlWithSchema(await schemas.fresh()));
});
