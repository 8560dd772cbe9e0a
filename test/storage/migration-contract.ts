import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewApiKeyRecord } from '../../src/domain/api-keys/api-key.js';
import { DependencyUnavailableError } from '../../src/domain/errors.js';
import type { Storage } from '../../src/domain/ports.js';

/**
 * Every migration, oldest first, by name: the same on every backend (postgres-storage.test.ts
 * checks PostgreSQL's list against SQLite's). Written out rather than read from the migrations, so
 * that a migration dropped or renamed by mistake fails here.
 */
export const MIGRATIONS = [
  '2026-11-22-01-pets',
  '2026-11-22-02-api-keys',
  '2026-11-22-03-idempotency-keys',
  '2026-11-23-04-api-key-ban-lifted',
  '2026-11-24-05-idempotency-purge',
  '2026-11-24-06-api-key-seq',
  '2026-11-24-07-api-key-deprecated-calls',
  '2026-11-25-08-store-generation',
  '2026-12-01-08-key-life',
  '2026-12-01-09-admin-tokens',
  '2026-12-01-10-api-key-changes',
  '2026-12-01-11-lifted-ban',
  '2026-12-02-13-key-listing',
  '2026-12-02-14-database-environment',
  '2026-12-02-15-key-scopes',
] as const;

const APPLIED_ALL = MIGRATIONS.map((name) => `applied ${name}`);

/** A database backend that can also revert its newest migration (for tests and operators). */
export interface RevertibleStorage extends Storage {
  migrateDown(): Promise<string[]>;
}

/** A key record named by `id`, whose hash follows from it (the storage tests' own keys). */
export function keyRecord(id: string, createdAt: number): NewApiKeyRecord {
  return {
    id,
    label: id,
    plan: 'free',
    scopes: ['pets:read', 'pets:write'],
    hash: createHash('sha256').update(id).digest('hex'),
    displayPrefix: 'pa_live_xxxx',
    createdAt,
  };
}

/** Reverts migrations, newest first, until `migration` is reverted; however many came after it. */
async function revertThrough(storage: RevertibleStorage, migration: string): Promise<void> {
  const line = `reverted ${migration}`;
  let reverted: string[] = [];
  for (let i = 0; i < MIGRATIONS.length && !reverted.includes(line); i += 1) {
    reverted = await storage.migrateDown();
  }
  expect(reverted).toEqual([line]);
}

/**
 * What migrating down and up again must do on every database backend. `openEmpty` gives a storage
 * on a database of its own with no migration applied yet (each test migrates it itself), so
 * reverting never touches what another test reads.
 */
export function describeMigrationContract(
  name: string,
  openEmpty: () => Promise<RevertibleStorage>,
): void {
  describe(`Migration contract: ${name}`, () => {
    let storage: RevertibleStorage;

    beforeEach(async () => {
      storage = await openEmpty();
    });

    afterEach(async () => {
      await storage.close();
    });

    it('reverts every migration with migrateDown and applies them again', async () => {
      await expect(storage.migrate()).resolves.toEqual(APPLIED_ALL);
      await storage.pets.create({ name: 'Doomed', categoryId: 1n });

      for (const migration of [...MIGRATIONS].reverse()) {
        await expect(storage.migrateDown()).resolves.toEqual([`reverted ${migration}`]);
      }
      // No table left: a missing relation, which is a bug to report and not an outage to retry.
      const missing = await storage.pets.list({ afterId: 0, limit: 10 }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(missing).toBeInstanceOf(Error);
      expect(missing).not.toBeInstanceOf(DependencyUnavailableError);
      expect(String(missing)).toMatch(/pets/);

      await expect(storage.migrate()).resolves.toEqual(APPLIED_ALL);
      await expect(storage.pets.list({ afterId: 0, limit: 10 })).resolves.toEqual([]);
      const pet = await storage.pets.create({
        name: 'Reborn',
        categoryId: 2n,
        status: 'available',
      });
      // The ids start again with the table.
      expect(pet.id).toBe(1);
      await expect(storage.pets.get(BigInt(pet.id))).resolves.toEqual(pet);
      const scope = { apiKeyId: 'key_test', key: 'k1' };
      const idempotent = { scope, fingerprint: 'fp', now: 1_000, retentionMs: 10_000 };
      await expect(
        storage.pets.createIdempotent({ name: 'Keyed', categoryId: 1n }, idempotent),
      ).resolves.toMatchObject({ kind: 'created' });
      await expect(storage.apiKeys.insertIfNone(keyRecord('key_reborn', 1))).resolves.toBe(true);
      await storage.apiKeys.insert(keyRecord('key_after_down', 2));
      await expect(storage.apiKeys.count()).resolves.toBe(2);
    });

    // Reverting everything drops the tables, and with them whatever a down step forgot (an index,
    // a trigger): only applying a migration again over its own down step shows what it left.
    it('reverts each migration so that it applies again over what its down step left', async () => {
      await storage.migrate();
      for (let depth = 1; depth <= MIGRATIONS.length; depth += 1) {
        const since = MIGRATIONS.length - depth;
        for (let i = 0; i < depth; i += 1) await storage.migrateDown();
        await expect(storage.migrate()).resolves.toEqual(APPLIED_ALL.slice(since));
      }
    });

    it('gives every key that existed before scopes both scopes, and keeps a narrower one', async () => {
      await storage.migrate();
      await revertThrough(storage, '2026-12-02-15-key-scopes');
      await storage.apiKeys.insert(keyRecord('key_old', 1_000));

      expect(await storage.migrate()).toContain('applied 2026-12-02-15-key-scopes');

      expect((await storage.apiKeys.findById('key_old'))?.scopes).toEqual([
        'pets:read',
        'pets:write',
      ]);
      await storage.apiKeys.insert({ ...keyRecord('key_new', 2_000), scopes: ['pets:read'] });
      expect((await storage.apiKeys.findById('key_new'))?.scopes).toEqual(['pets:read']);
    });

    it('numbers the keys that exist before the seq migration in creation order', async () => {
      await storage.migrate();
      // Back to before the seq migration (and the one before it).
      await revertThrough(storage, '2026-11-24-05-idempotency-purge');
      // Inserted newest first, as three hosts with unequal clocks might have done.
      for (const [id, createdAt] of [
        ['key_c', 3_000],
        ['key_a', 1_000],
        ['key_b', 2_000],
      ] as const) {
        await storage.apiKeys.insert(keyRecord(id, createdAt));
      }

      await storage.migrate();

      await expect(storage.apiKeys.hashesAfter(0)).resolves.toEqual(
        ['key_a', 'key_b', 'key_c'].map((id, i) => ({ hash: keyRecord(id, 0).hash, seq: i + 1 })),
      );
      await storage.apiKeys.insert(keyRecord('key_d', 500));
      await expect(storage.apiKeys.hashesAfter(3)).resolves.toEqual([
        { hash: keyRecord('key_d', 0).hash, seq: 4 },
      ]);
    });
  });
}
