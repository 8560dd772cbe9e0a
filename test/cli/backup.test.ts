import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createSqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js';
import { SQLITE_MIGRATIONS } from '../../src/storage/sqlite/sqlite-migrations.js';
import { petstore, useTempDatabases, withStorage } from './cli-harness.js';

const tempDatabase = useTempDatabases();

/** A database holding `pets` sample pets, and a path beside it for the copy. */
async function seeded(pets: number): Promise<{ db: string; copy: string }> {
  const db = tempDatabase();
  expect((await petstore(db, ['seed', '--count', String(pets)])).code).toBe(0);
  return { db, copy: join(dirname(db.slice('sqlite:'.length)), 'copy.db') };
}

const REPORT =
  /^Backed up SQLite database (.+) to (.+): ([\d,]+) pages of 4,096 bytes \((\d+\.\d) (KiB|MiB)\) in \d+\.\d\d s\.\n$/;

describe('petstore backup', () => {
  it('copies the database to a new 0600 file and says how many pages, how big and how long', async () => {
    const { db, copy } = await seeded(500);

    const result = await petstore(db, ['backup', copy]);

    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    const [, source, target, pages] = REPORT.exec(result.stderr) ?? [];
    expect([source, target]).toEqual([db.slice('sqlite:'.length), copy]);
    expect(Number(pages?.replaceAll(',', '')) * 4096).toBe(statSync(copy).size);
    expect((statSync(copy).mode & 0o777).toString(8)).toBe('600');
    const pets = await withStorage(`sqlite:${copy}`, (storage) =>
      storage.pets.list({ afterId: 0, limit: 1_000 }),
    );
    expect(pets).toHaveLength(500);
  });

  it('refuses a file that exists, pointing to --force, and leaves the file as it was', async () => {
    const { db, copy } = await seeded(3);
    writeFileSync(copy, 'last night');

    const result = await petstore(db, ['backup', copy]);

    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`petstore backup: ${copy} exists; pass --force to replace it\n`);
    expect(readFileSync(copy, 'utf8')).toBe('last night');
  });

  it('says in a sentence why it cannot write the copy: no such folder, or a folder', async () => {
    const { db, copy } = await seeded(1);
    const missing = await petstore(db, ['backup', join(copy, 'nowhere', 'copy.db')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('its folder does not exist');
    expect(missing.stderr).not.toMatch(/ENOENT|EISDIR/);
    for (const force of [[], ['--force']]) {
      const folder = await petstore(db, ['backup', ...force, dirname(copy)]);
      expect(folder.code).toBe(1);
      expect(folder.stderr).toContain('it is a folder; name a file inside it');
      expect(folder.stderr).not.toMatch(/ENOENT|EISDIR/);
    }
  });

  it('replaces a file that exists with --force', async () => {
    const { db, copy } = await seeded(3);
    writeFileSync(copy, 'last night');

    const result = await petstore(db, ['backup', '--force', copy]);

    expect(result.code).toBe(0);
    const pets = await withStorage(`sqlite:${copy}`, (storage) =>
      storage.pets.list({ afterId: 0, limit: 10 }),
    );
    expect(pets).toHaveLength(3);
  });

  it('refuses to write the copy over the database itself, even with --force', async () => {
    const { db } = await seeded(3);
    const path = db.slice('sqlite:'.length);

    const result = await petstore(db, ['backup', '--force', path]);

    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `petstore backup: ${path} is the database itself; write the copy to another file\n`,
    );
    const pets = await withStorage(db, (storage) => storage.pets.list({ afterId: 0, limit: 10 }));
    expect(pets).toHaveLength(3);
  });

  it('refuses a DATABASE_URL where no database exists, creating neither it nor the copy', async () => {
    const db = tempDatabase();
    const path = db.slice('sqlite:'.length);
    const copy = join(dirname(path), 'copy.db');

    const result = await petstore(db, ['backup', copy]);

    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `petstore backup: failed: no SQLite database at ${path} (check DATABASE_URL)\n`,
    );
    expect([existsSync(path), existsSync(copy)]).toEqual([false, false]);
  });

  it('copies the database as it is, without applying pending migrations first', async () => {
    const { db, copy } = await seeded(3);
    const older = createSqliteStorage(db.slice('sqlite:'.length));
    await older.migrateDown();
    await older.close();

    expect((await petstore(db, ['backup', copy])).code).toBe(0);

    const raw = new BetterSqlite3(copy, { readonly: true });
    try {
      const applied = raw.prepare('SELECT name FROM kysely_migration ORDER BY name').pluck().all();
      expect(applied).toEqual(Object.keys(SQLITE_MIGRATIONS).sort().slice(0, -1));
    } finally {
      raw.close();
    }
  });

  it('answers on PostgreSQL that pg_dump and point-in-time recovery do this job', async () => {
    // No server is needed: the command says so before it would ask the database anything.
    const result = await petstore('postgres://nobody@127.0.0.1:1/none', ['backup', 'copy.db']);

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^petstore backup: backs up SQLite databases only; .*pg_dump/);
    expect(result.stderr).toContain('point-in-time recovery (PITR)');
    expect(existsSync('copy.db')).toBe(false);
  });
});
