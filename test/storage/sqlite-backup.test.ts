import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Pet } from '../../src/domain/pets/pet.js';
import type { Storage } from '../../src/domain/ports.js';
import {
  createSqliteStorage,
  type SqliteStorage,
} from '../../src/storage/sqlite/sqlite-storage.js';

const root = mkdtempSync(join(tmpdir(), 'petstore-backup-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let dir: string;
let storage: SqliteStorage;
let counter = 0;
beforeEach(async () => {
  counter += 1;
  dir = join(root, `case-${counter}`);
  mkdirSync(dir);
  storage = createSqliteStorage(join(dir, 'petstore.db'));
  await storage.migrate();
});
afterEach(async () => {
  await storage.close();
});

function mode(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

async function everyPet(source: Storage): Promise<Pet[]> {
  return source.pets.list({ afterId: 0, limit: 1_000_000 });
}

/** Opens a copy the way a restore does, and checks it the way SQLite does. */
async function openCopy<T>(path: string, use: (copy: Storage) => Promise<T>): Promise<T> {
  const check = new BetterSqlite3(path);
  try {
    expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
  } finally {
    check.close();
  }
  const copy = createSqliteStorage(path);
  try {
    return await use(copy);
  } finally {
    await copy.close();
  }
}

describe('SQLite backup', () => {
  it('copies pets, keys and idempotency records to a 0600 file, even with umask 000, and leaves nothing else', async () => {
    await storage.pets.insertMany([
      { name: 'Copied', categoryId: 9223372036854775807n, status: 'sold' },
      { name: 'Copied too', categoryId: 2n },
    ]);
    await storage.apiKeys.insert({
      id: 'key_backup',
      label: 'backup',
      plan: 'pro',
      scopes: ['pets:read', 'pets:write'],
      hash: 'b'.repeat(64),
      displayPrefix: 'pa_live_bbbb',
      createdAt: 1,
    });
    const scope = { apiKeyId: 'key_backup', key: 'retry-1' };
    const request = { scope, fingerprint: 'fp', now: 1_000, retentionMs: 60_000 };
    await storage.pets.createIdempotent({ name: 'Keyed', categoryId: 3n }, request);
    const destination = join(dir, 'copy.db');

    const umask = process.umask(0o000);
    let outcome;
    try {
      outcome = await storage.backup(destination, { overwrite: false });
    } finally {
      process.umask(umask);
    }

    expect(outcome).toEqual({
      kind: 'copied',
      pages: expect.any(Number),
      pageSize: 4096,
      bytes: statSync(destination).size,
    });
    expect(outcome.kind === 'copied' && outcome.pages * outcome.pageSize).toBe(
      statSync(destination).size,
    );
    expect(mode(destination)).toBe('600');
    expect(readdirSync(dir).sort()).toEqual([
      'copy.db',
      'petstore.db',
      'petstore.db-shm',
      'petstore.db-wal',
    ]);
    const original = await everyPet(storage);
    await openCopy(destination, async (copy) => {
      expect(await everyPet(copy)).toEqual(original);
      expect((await copy.apiKeys.findById('key_backup'))?.plan).toBe('pro');
      await expect(
        copy.pets.createIdempotent({ name: 'Keyed', categoryId: 3n }, request),
      ).resolves.toMatchObject({ kind: 'replay' });
    });
  });

  it('refuses a file that exists without overwrite, leaving it as it was', async () => {
    const destination = join(dir, 'taken.db');
    writeFileSync(destination, 'an older copy');

    await expect(storage.backup(destination, { overwrite: false })).resolves.toEqual({
      kind: 'exists',
    });

    expect(readFileSync(destination, 'utf8')).toBe('an older copy');
    expect(readdirSync(dir).filter((name) => name.includes('partial'))).toEqual([]);
  });

  it('replaces a file that exists with overwrite', async () => {
    await storage.pets.create({ name: 'Newest', categoryId: 1n });
    const destination = join(dir, 'taken.db');
    writeFileSync(destination, 'an older copy');

    await expect(storage.backup(destination, { overwrite: true })).resolves.toMatchObject({
      kind: 'copied',
    });

    await openCopy(destination, async (copy) => {
      expect((await everyPet(copy)).map((pet) => pet.name)).toEqual(['Newest']);
    });
  });

  it('refuses to write over the database or its -wal, whether named directly, relatively or by a link', async () => {
    const database = join(dir, 'petstore.db');
    symlinkSync(database, join(dir, 'link.db'));
    const before = await everyPet(storage);

    for (const destination of [
      database,
      `${database}-wal`,
      relative(process.cwd(), database),
      join(dir, 'link.db'),
    ]) {
      await expect(storage.backup(destination, { overwrite: true })).resolves.toEqual({
        kind: 'is_source',
      });
    }
    expect(await everyPet(storage)).toEqual(before);
  });

  it('removes its temporary file when the copy cannot be put in place', async () => {
    const destination = join(dir, 'a-folder');
    mkdirSync(destination);

    await expect(storage.backup(destination, { overwrite: true })).rejects.toThrow();

    expect(readdirSync(dir).sort()).toEqual([
      'a-folder',
      'petstore.db',
      'petstore.db-shm',
      'petstore.db-wal',
    ]);
  });

  it('finishes while another connection commits between every step, and copies one snapshot', async () => {
    // Over 100 pages, so a copy made in SQLite's usual small steps would restart at each commit.
    await storage.pets.insertMany(
      Array.from({ length: 20_000 }, (_, i) => ({ name: `Seed ${i}`, categoryId: 1n })),
    );
    const writer = createSqliteStorage(join(dir, 'petstore.db'));
    let writing = true;
    let written = 0;
    const writes = (async () => {
      while (writing) {
        await writer.pets.create({ name: `During ${written}`, categoryId: 2n });
        written += 1;
      }
    })();
    try {
      while (written < 20) await new Promise((resolve) => setImmediate(resolve));
      const acknowledged = written;
      const destination = join(dir, 'copy.db');

      const outcome = await storage.backup(destination, { overwrite: false });

      writing = false;
      await writes;
      expect(outcome).toMatchObject({ kind: 'copied' });
      await openCopy(destination, async (copy) => {
        const pets = await everyPet(copy);
        const during = pets.filter((pet) => pet.name.startsWith('During '));
        expect(during.length).toBeGreaterThanOrEqual(acknowledged);
        // One snapshot: the creates it holds are the first ones, without a gap.
        expect(during.map((pet) => pet.name)).toEqual(
          Array.from({ length: during.length }, (_, i) => `During ${i}`),
        );
        expect(pets).toHaveLength(20_000 + during.length);
      });
    } finally {
      writing = false;
      await writes;
      await writer.close();
    }
  });
});
