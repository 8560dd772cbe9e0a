import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, type Migration, PostgresDialect, sql, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/storage/sql/migrate.js';
import { POSTGRES_MIGRATIONS } from '../../src/storage/postgres/postgres-migrations.js';
import { SQLITE_MIGRATIONS } from '../../src/storage/sqlite/sqlite-migrations.js';
import { POSTGRES_URL } from '../helpers/postgres.js';
import { createKey, freePort, REPO_ROOT, spawnServer } from '../helpers/server-process.js';
import { serviceAnswers } from '../helpers/services.js';
import { testRunEnv } from '../helpers/test-run.js';

/**
 * Roll back: the previous release (the last row of docs/releases.md), built from its commit, runs
 * against a database this release migrated, on SQLite and on PostgreSQL. A release listed as not
 * tolerating newer migrations must refuse plainly instead; the mechanism is then shown with this
 * release's build against a database with one additive migration more (the next release's).
 * Runs the built server (npm run build first).
 */
interface Release {
  version: string;
  commit: string;
  tolerant: boolean;
}

function previousRelease(): Release {
  const rows = readFileSync(join(REPO_ROOT, 'docs/releases.md'), 'utf8')
    .split('\n')
    .map((line) => /^\|\s*(\S+)\s*\|\s*([0-9a-f]{40})\s*\|\s*(yes|no)\s*\|$/.exec(line))
    .filter((match) => match !== null);
  const last = rows.at(-1);
  if (last === undefined) throw new Error('docs/releases.md lists no release');
  return { version: last[1] ?? '', commit: last[2] ?? '', tolerant: last[3] === 'yes' };
}

/** The next release's migration: additive, as the policy asks. */
const NEXT: Record<string, Migration> = {
  '2999-01-01-01-next-release-colour': {
    async up(db: Kysely<unknown>) {
      await sql`ALTER TABLE pets ADD COLUMN colour TEXT NULL`.execute(db);
    },
  },
};

const hasPostgres = await serviceAnswers('postgres');
const dirs: string[] = [];
const databases: string[] = [];
const previous = previousRelease();
let previousRoot = '';

beforeAll(() => {
  previousRoot = mkdtempSync(join(tmpdir(), `petstore-release-${previous.version}-`));
  dirs.push(previousRoot);
  execFileSync('sh', ['-c', `git archive ${previous.commit} | tar -x -C "${previousRoot}"`], {
    cwd: REPO_ROOT,
  });
  // Its dependencies are this tree's where compatible (the same majors of what it imports).
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(previousRoot, 'node_modules'));
  // Its build is kept outside the clone, by commit and compiler: the same input, the same output,
  // and 5 s of CPU a run saved.
  const typescript = (
    JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules/typescript/package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
  const kept = join(homedir(), '.cache/petstore/releases', `${previous.commit}-ts${typescript}`);
  if (!existsSync(kept)) {
    execFileSync('node', ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
      cwd: previousRoot,
    });
    const partial = `${kept}.${process.pid}`;
    cpSync(join(previousRoot, 'dist'), partial, { recursive: true });
    try {
      renameSync(partial, kept);
    } catch {
      // Another run kept the same build first.
      rmSync(partial, { recursive: true, force: true });
    }
  }
  cpSync(kept, join(previousRoot, 'dist'), { recursive: true });
}, 180_000);

afterAll(async () => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  if (databases.length === 0) return;
  await admin.connect();
  for (const name of databases.splice(0)) {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  }
  await admin.end();
});

function sqliteUrl(): string {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-rollback-'));
  dirs.push(dir);
  return `sqlite:${join(dir, 'petstore.db')}`;
}

async function postgresUrl(): Promise<string> {
  const name = `petstore_rollback_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  await admin.end();
  databases.push(name);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Migrates with this release's CLI. */
function migrateWithThisRelease(databaseUrl: string): void {
  execFileSync('node', ['dist/cli/main.js', 'migrate'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', ...testRunEnv(), DATABASE_URL: databaseUrl },
    stdio: 'ignore',
  });
}

/** Runs this release's migration runner on the database with `migrations(known)`. */
async function runner(
  databaseUrl: string,
  direction: 'latest' | 'down',
  migrations: (known: Record<string, Migration>) => Record<string, Migration>,
): Promise<string[]> {
  const sqlite = databaseUrl.startsWith('sqlite:');
  const db = new Kysely<unknown>({
    dialect: sqlite
      ? new SqliteDialect({ database: new BetterSqlite3(databaseUrl.slice('sqlite:'.length)) })
      : new PostgresDialect({ pool: new pg.Pool({ connectionString: databaseUrl, max: 1 }) }),
  });
  try {
    const known = sqlite ? SQLITE_MIGRATIONS : POSTGRES_MIGRATIONS;
    return await migrate(db, migrations(known), direction, {
      ...(sqlite ? {} : { migrationTableSchema: 'public' }),
      onNewer: () => undefined,
    });
  } finally {
    await db.destroy();
  }
}

/** healthz, readyz, list, create and get, with a key the current CLI made. */
async function expectServes(url: string, key: string): Promise<void> {
  const auth = { authorization: `Bearer ${key}` };
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  expect((await fetch(`${url}/readyz`)).status).toBe(200);
  const list = await fetch(`${url}/v1/pets`, { headers: auth });
  expect(list.status).toBe(200);
  expect(Array.isArray(await list.json())).toBe(true);
  const created = await fetch(`${url}/v1/pets`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Rolled back', categoryId: 1 }),
  });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: number };
  const got = await fetch(`${url}/v1/pets/${id}`, { headers: auth });
  expect(got.status).toBe(200);
  expect(((await got.json()) as { name: string }).name).toBe('Rolled back');
}

const backends = [
  ['SQLite', async () => sqliteUrl()],
  ...(hasPostgres ? ([['PostgreSQL', postgresUrl]] as const) : []),
] as const;
if (!hasPostgres) console.warn('rollback: PostgreSQL does not answer; only SQLite is checked');

describe(`roll back to the previous release (${previous.version}, ${previous.commit.slice(0, 7)})`, () => {
  for (const [backend, fresh] of backends) {
    it(`${backend}: the previous release against a database this release migrated`, async () => {
      const databaseUrl = await fresh();
      migrateWithThisRelease(databaseUrl);
      const key = await createKey(databaseUrl);
      expect(existsSync(join(previousRoot, 'dist/main.js'))).toBe(true);
      if (previous.tolerant) {
        const server = await spawnServer({ DATABASE_URL: databaseUrl }, 'node', {
          cwd: previousRoot,
        });
        try {
          await expectServes(server.url, key);
        } finally {
          server.child.kill('SIGTERM');
          await server.exited;
        }
      } else {
        // Listed as not tolerating: it must refuse to start, naming the migration it lacks.
        const port = String(await freePort());
        const run = spawnSync('node', ['dist/main.js'], {
          cwd: previousRoot,
          env: {
            PATH: process.env.PATH ?? '',
            ...testRunEnv(),
            DATABASE_URL: databaseUrl,
            PORT: port,
          },
          encoding: 'utf8',
          timeout: 30_000,
        });
        expect(run.status).toBe(1);
        expect(run.stderr).toMatch(/previously executed migration \S+ is missing/);
      }
    });

    it(`${backend}: this release against a database the next release migrated`, async () => {
      const databaseUrl = await fresh();
      // This release's migrations and the next release's one, as the next release applies them.
      await runner(databaseUrl, 'latest', (known) => ({ ...known, ...NEXT }));
      const key = await createKey(databaseUrl);
      const server = await spawnServer({ DATABASE_URL: databaseUrl });
      try {
        expect(server.output()).toContain(
          'migrations newer than this release, left in place: 2999-01-01-01-next-release-colour',
        );
        await expectServes(server.url, key);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
      // Reverting past the next release's migration is that release's job.
      await expect(runner(databaseUrl, 'down', (known) => known)).rejects.toThrow(
        'belong to a later release (2999-01-01-01-next-release-colour)',
      );
      // An unknown migration among this release's own is a gap, not a later release.
      const third = Object.keys(SQLITE_MIGRATIONS)[2];
      await expect(
        runner(databaseUrl, 'latest', (known) =>
          Object.fromEntries(Object.entries(known).filter(([name]) => name !== third)),
        ),
      ).rejects.toThrow('does not know among its own');
    });
  }
});
