import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DependencyUnavailableError } from '../../src/domain/errors.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { createSqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js';
import { describeMigrationContract, keyRecord, MIGRATIONS } from './migration-contract.js';
import { describeStorageContract } from './storage-contract.js';
import { scaled } from '../helpers/machine.js';

const dir = mkdtempSync(join(tmpdir(), 'petstore-storage-'));
let fileCounter = 0;

function tempPath(): string {
  fileCounter += 1;
  return join(dir, `store-${fileCounter}.db`);
}

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describeStorageContract('sqlite :memory:', () =>
  createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true }),
);

// One file shared by every test of the run, like a shared database that already holds rows.
const sharedFile = join(dir, 'nested', 'shared.db');
describeStorageContract('sqlite file', () =>
  createStorage({ kind: 'sqlite', path: sharedFile }, { migrate: true }),
);

describeMigrationContract('sqlite :memory:', () =>
  Promise.resolve(createSqliteStorage(':memory:')),
);

describe('SQLite storage specifics', () => {
  it('keeps pets in a file across close and reopen', async () => {
    const path = tempPath();
    const first = await createStorage({ kind: 'sqlite', path }, { migrate: true });
    const pet = await first.pets.create({
      name: 'Persistent 🐢',
      categoryId: 9223372036854775807n,
      status: 'sold',
    });
    await first.close();

    const second = await createStorage({ kind: 'sqlite', path }, { migrate: true });
    try {
      await expect(second.pets.get(BigInt(pet.id))).resolves.toEqual(pet);
      await expect(second.pets.list({ afterId: 0, limit: 10 })).resolves.toEqual([pet]);
    } finally {
      await second.close();
    }
  });

  it('opens the file in WAL journal mode', async () => {
    const path = tempPath();
    const storage = await createStorage({ kind: 'sqlite', path }, { migrate: true });
    await storage.pets.create({ name: 'Wal', categoryId: 1n });
    expect(existsSync(`${path}-wal`)).toBe(true);
    await storage.close();

    const raw = new BetterSqlite3(path, { readonly: true });
    try {
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      raw.close();
    }
  });

  it('reads WAL and synchronous=FULL (2) back from the connection that commits (the worker)', async () => {
    const storage = await createStorage({ kind: 'sqlite', path: tempPath() }, { migrate: true });
    try {
      await expect(storage.durability()).resolves.toEqual({
        journal_mode: 'wal',
        synchronous: 2,
        synchronous_name: 'FULL',
      });
    } finally {
      await storage.close();
    }
  });

  it('commits key, ban, deprecated-call and purge writes off the event loop while another connection holds the write lock', async () => {
    const path = tempPath();
    const storage = await createStorage({ kind: 'sqlite', path }, { migrate: true });
    const blocker = new BetterSqlite3(path);
    try {
      const record = keyRecord('key_lock_wait', 1_000);
      await storage.apiKeys.insert(record);
      blocker.exec('BEGIN IMMEDIATE');
      const writes = Promise.all([
        storage.apiKeys.touch(record.id, 2_000),
        storage.apiKeys.setBannedUntil(record.id, 3_000),
        storage.apiKeys.addDeprecatedCalls([{ id: record.id, calls: 4 }]),
        storage.idempotency.purgeExpired(0, 10),
      ]);
      // A write on the event loop would hold it for up to busy_timeout (5 s) here.
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const waited = performance.now() - started;
      blocker.exec('COMMIT');
      await expect(writes).resolves.toEqual([undefined, true, undefined, 0]);
      expect(waited).toBeLessThan(scaled(2_500));
      await expect(storage.apiKeys.findById(record.id)).resolves.toMatchObject({
        lastUsedAt: 2_000,
        bannedUntil: 3_000,
        deprecatedCalls: 4,
      });
    } finally {
      if (blocker.inTransaction) blocker.exec('ROLLBACK');
      blocker.close();
      await storage.close();
    }
  });

  it('delivers the reply of a commit the worker answered when pollCommitReplies is called, without a turn of the event loop', async () => {
    const storage = createSqliteStorage(tempPath());
    try {
      await storage.migrate();
      await storage.pets.create({ name: 'Worker started', categoryId: 1n });
      let created: unknown;
      void storage.pets.create({ name: 'Replied', categoryId: 2n }).then((pet) => {
        created = pet;
      });
      // The group goes to the worker at the next check phase; then only microtasks run here, so
      // the answer's message event cannot fire: what delivers the create's reply is pollCommitReplies.
      await new Promise((resolve) => setImmediate(resolve));
      const spin = async (ms: number, poll: boolean) => {
        const until = performance.now() + ms;
        while (created === undefined && performance.now() < until) {
          if (poll) storage.pollCommitReplies?.();
          await null;
        }
      };
      await spin(200, false);
      expect(created).toBeUndefined();
      await spin(5_000, true);
      expect(created).toMatchObject({ name: 'Replied', categoryId: 2n });
    } finally {
      await storage.close();
    }
  });

  it('answers DependencyUnavailableError while its commit worker is dead, then commits again on a new one', async () => {
    const storage = createSqliteStorage(tempPath());
    try {
      await storage.migrate();
      await storage.pets.create({ name: 'Before', categoryId: 1n });
      await storage.writer.killWorkerForTests();
      await expect(storage.pets.create({ name: 'Lost', categoryId: 1n })).rejects.toBeInstanceOf(
        DependencyUnavailableError,
      );
      await expect(storage.ping()).rejects.toBeInstanceOf(DependencyUnavailableError);
      await vi.waitFor(() => storage.ping(), { timeout: 10_000, interval: 50 });
      await expect(storage.pets.create({ name: 'After', categoryId: 1n })).resolves.toMatchObject({
        name: 'After',
      });
    } finally {
      await storage.close();
    }
  });

  it('creates its folders 0700 and the database, -wal and -shm files 0600, even with umask 000', async () => {
    const folder = join(dir, `modes-${fileCounter++}`);
    const path = join(folder, 'deeper', 'petstore.db');
    const umask = process.umask(0o000);
    let storage;
    try {
      storage = await createStorage({ kind: 'sqlite', path }, { migrate: true });
    } finally {
      process.umask(umask);
    }
    try {
      await storage.pets.create({ name: 'Private', categoryId: 1n });
      const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);
      expect([folder, join(folder, 'deeper')].map(mode)).toEqual(['700', '700']);
      expect([path, `${path}-wal`, `${path}-shm`].map(mode)).toEqual(['600', '600', '600']);
    } finally {
      await storage.close();
    }
  });

  it('leaves the mode of a database file that exists as it is', async () => {
    const path = tempPath();
    writeFileSync(path, '');
    chmodSync(path, 0o640);
    const storage = await createStorage({ kind: 'sqlite', path }, { migrate: true });
    try {
      await storage.pets.create({ name: 'Shared with a group', categoryId: 1n });
      expect((statSync(path).mode & 0o777).toString(8)).toBe('640');
      // SQLite gives the WAL the database file's mode.
      expect((statSync(`${path}-wal`).mode & 0o777).toString(8)).toBe('640');
    } finally {
      await storage.close();
    }
  });

  it('refuses a missing file when it must exist, and creates nothing', async () => {
    const path = join(dir, `missing-${fileCounter++}`, 'petstore.db');

    await expect(createStorage({ kind: 'sqlite', path }, { mustExist: true })).rejects.toThrow(
      `no SQLite database at ${path}`,
    );
    expect(existsSync(join(path, '..'))).toBe(false);
  });

  it('treats a second migrate() as a no-op', async () => {
    const path = tempPath();
    const storage = createSqliteStorage(path);
    try {
      await expect(storage.migrate()).resolves.toEqual(MIGRATIONS.map((m) => `applied ${m}`));
      const pet = await storage.pets.create({ name: 'Kept', categoryId: 1n });
      await expect(storage.migrate()).resolves.toEqual([]);
      await expect(storage.pets.get(BigInt(pet.id))).resolves.toEqual(pet);
    } finally {
      await storage.close();
    }
    const reopened = await createStorage({ kind: 'sqlite', path });
    try {
      await expect(reopened.migrate()).resolves.toEqual([]);
    } finally {
      await reopened.close();
    }
  });

  it('gives exactly one true among concurrent insertIfNone calls from two storages on an empty file', async () => {
    const path = tempPath();
    const storages = [
      await createStorage({ kind: 'sqlite', path }, { migrate: true }),
      await createStorage({ kind: 'sqlite', path }, { migrate: true }),
    ];
    try {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          storages[i % 2]?.apiKeys.insertIfNone(keyRecord(`key_first_${i}`, 1_000 + i)),
        ),
      );
      expect(results.filter((inserted) => inserted === true)).toHaveLength(1);
      await expect(storages[0]?.apiKeys.count()).resolves.toBe(1);
      // It is numbered like any other key.
      const [only] = (await storages[0]?.apiKeys.hashesAfter(0)) ?? [];
      expect(only?.seq).toBe(1);
    } finally {
      for (const storage of storages) await storage?.close();
    }
  });

  it('reports the sqlite backend', async () => {
    const storage = await createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true });
    try {
      expect(storage.backend).toBe('sqlite');
    } finally {
      await storage.close();
    }
  });
});
