import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { petstore } from '../cli/cli-harness.js';
import { POSTGRES_URL, postgresFor } from '../helpers/postgres.js';
import { call, startServer, type TestServer } from '../helpers/test-server.js';

const run = promisify(execFile);

/** Servers read the store generation once a second; this leaves room for a busy machine. */
const WITHIN_MS = 10_000;

interface PetBody {
  id: number;
  name: string;
}

async function createPet(server: TestServer, key: string, name: string): Promise<PetBody> {
  const res = await call(server, 'POST', '/v1/pets', { key, body: { name, categoryId: 1 } });
  expect(res.status).toBe(201);
  return res.body as PetBody;
}

async function getPet(server: TestServer, key: string, id: number): Promise<PetBody> {
  const res = await call(server, 'GET', `/v1/pets/${id}`, { key });
  expect(res.status).toBe(200);
  return res.body as PetBody;
}

/** Asks until the pet has the name (the server invalidates its caches on its own), or gives up. */
async function untilNamed(server: TestServer, key: string, id: number, name: string) {
  const deadline = performance.now() + WITHIN_MS;
  let seen = await getPet(server, key, id);
  while (seen.name !== name && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    seen = await getPet(server, key, id);
  }
  expect(seen).toMatchObject({ id, name });
}

async function listed(server: TestServer, key: string): Promise<PetBody[]> {
  const res = await call(server, 'GET', '/v1/pets?limit=100', { key });
  expect(res.status).toBe(200);
  return res.body as PetBody[];
}

const SUITE = 'a restore under a running server on PostgreSQL';
const available = await postgresFor(SUITE);

describe.runIf(available)(SUITE, () => {
  const name = `test_restore_${randomBytes(6).toString('hex')}`;
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const dir = mkdtempSync(join(tmpdir(), 'petstore-restore-'));
  const admin = async (text: string, values: unknown[] = [], on = POSTGRES_URL) => {
    const client = new pg.Client({ connectionString: on });
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    await admin(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    server = await startServer({ env: { DATABASE_URL: databaseUrl } });
    key = (await server.createKey('business')).key;
  });
  afterAll(async () => {
    await server?.close();
    await admin(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers the new pet of a reused id within seconds after pg_restore --clean of a dump', async () => {
    await createPet(server, key, 'Before the dump');
    const dump = join(dir, 'petstore.dump');
    await run('pg_dump', ['--format=custom', `--file=${dump}`, databaseUrl]);
    const old = await createPet(server, key, 'Lost by the restore');
    expect((await getPet(server, key, old.id)).name).toBe('Lost by the restore'); // now kept

    await run('pg_restore', ['--clean', '--if-exists', `--dbname=${databaseUrl}`, dump]);
    const fresh = await createPet(server, key, 'Made after the restore');
    expect(fresh.id).toBe(old.id); // the sequence came back with the dump

    await untilNamed(server, key, fresh.id, 'Made after the restore');
    expect((await listed(server, key)).find((pet) => pet.id === fresh.id)?.name).toBe(
      'Made after the restore',
    );
  });

  it('answers a pet changed in the database by hand once petstore cache-reset ran', async () => {
    const pet = await createPet(server, key, 'As created');
    expect((await getPet(server, key, pet.id)).name).toBe('As created');
    // What a restore of data only into the existing tables amounts to: nothing a server can see.
    await admin(
      'UPDATE pets SET name = $1 WHERE id = $2',
      ['Changed by hand', pet.id],
      databaseUrl,
    );
    expect((await getPet(server, key, pet.id)).name).toBe('As created');

    const reset = await petstore(databaseUrl, ['cache-reset']);
    expect(reset).toMatchObject({ code: 0, stdout: '' });
    expect(reset.stderr).toContain('new store generation');
    await untilNamed(server, key, pet.id, 'Changed by hand');
    expect((await listed(server, key)).find((p) => p.id === pet.id)?.name).toBe('Changed by hand');
  });
});

describe('a change under a running server on SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-restore-'));
  const file = join(dir, 'petstore.db');
  const databaseUrl = `sqlite:${file}`;
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startServer({ env: { DATABASE_URL: databaseUrl } });
    key = (await server.createKey('business')).key;
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a pet changed by another process once petstore cache-reset ran', async () => {
    const pet = await createPet(server, key, 'As created');
    expect((await getPet(server, key, pet.id)).name).toBe('As created');
    const other = new BetterSqlite3(file);
    try {
      other.pragma('busy_timeout = 5000');
      other.prepare('UPDATE pets SET name = ? WHERE id = ?').run('Changed by hand', pet.id);
    } finally {
      other.close();
    }
    expect((await getPet(server, key, pet.id)).name).toBe('As created');

    const reset = await petstore(databaseUrl, ['cache-reset']);
    expect(reset).toMatchObject({ code: 0, stdout: '' });
    await untilNamed(server, key, pet.id, 'Changed by hand');
  });

  it('answers the new pet of a reused id after a backup is restored into the live database', async () => {
    await createPet(server, key, 'Before the backup');
    const copy = join(dir, 'backup.db');
    expect((await petstore(databaseUrl, ['backup', copy])).code).toBe(0);
    const old = await createPet(server, key, 'Lost by the restore');
    expect((await getPet(server, key, old.id)).name).toBe('Lost by the restore');

    // What the sqlite3 shell's `.restore` does: the backup API, from the copy into the live file.
    const source = new BetterSqlite3(copy, { readonly: true });
    try {
      await source.backup(file);
    } finally {
      source.close();
    }
    const fresh = await createPet(server, key, 'Made after the restore');
    expect(fresh.id).toBe(old.id);
    await untilNamed(server, key, fresh.id, 'Made after the restore');
  });
});
