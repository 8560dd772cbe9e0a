import { describe, expect, it } from 'vitest';
import { samplePet } from '../../src/cli/commands/seed.js';
import { NAME_MAX_CODE_POINTS, PET_STATUSES } from '../../src/domain/pets/pet.js';
import { petstore, useTempDatabases, withStorage } from './cli-harness.js';

const tempDatabase = useTempDatabases();

describe('petstore seed', () => {
  it('inserts the number of pets asked for and reports it with the time taken', async () => {
    const db = tempDatabase();

    const result = await petstore(db, ['seed', '--count', '2500']);

    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^Inserted 2500 pets in \d+\.\d\d s \(\d+ pets\/s\)\.\n$/);
    const pets = await withStorage(db, (storage) =>
      storage.pets.list({ afterId: 0, limit: 10_000 }),
    );
    expect(pets).toHaveLength(2500);
  });

  it('adds to the pets already there', async () => {
    const db = tempDatabase();
    await petstore(db, ['seed', '--count', '3']);

    await petstore(db, ['seed', '--count', '4']);

    const pets = await withStorage(db, (storage) => storage.pets.list({ afterId: 0, limit: 100 }));
    expect(pets).toHaveLength(7);
  });

  it('gives pets every status, and some no status at all', async () => {
    const db = tempDatabase();

    await petstore(db, ['seed', '--count', '60']);

    const pets = await withStorage(db, (storage) => storage.pets.list({ afterId: 0, limit: 100 }));
    const statuses = new Set(pets.map((pet) => pet.status));
    expect([...statuses].sort()).toEqual([...PET_STATUSES, undefined].sort());
    expect(pets.filter((pet) => !('status' in pet)).length).toBeGreaterThan(0);
  });

  it('makes varied, valid names and small category ids', () => {
    const pets = Array.from({ length: 2_000 }, (_, i) => samplePet(i));
    const names = new Set(pets.map((pet) => pet.name));

    expect(names.size).toBe(pets.length);
    for (const { name } of pets) {
      expect([...name].length).toBeLessThanOrEqual(NAME_MAX_CODE_POINTS);
      expect(name.trim()).toBe(name);
      expect(name).toMatch(/^[A-Z]\p{L}+ \p{L}+( \d+)?$/u);
    }
    expect(new Set(pets.map((pet) => pet.categoryId))).toEqual(new Set([1n, 2n, 3n, 4n, 5n]));
  });

  it('pairs one name with several categories and statuses', () => {
    const luna = Array.from({ length: 2_000 }, (_, i) => samplePet(i)).filter((pet) =>
      pet.name.includes(' Luna'),
    );

    expect(new Set(luna.map((pet) => pet.categoryId)).size).toBeGreaterThan(1);
    expect(new Set(luna.map((pet) => pet.status)).size).toBeGreaterThan(1);
  });
});

describe('petstore migrate', () => {
  it('applies the migrations of a new database and lists them', async () => {
    const db = tempDatabase();

    const result = await petstore(db, ['migrate']);

    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`SQLite database ${db.slice('sqlite:'.length)}:`);
    expect(result.stderr).toMatch(/ {2}applied \S+pets\n/);
    expect(result.stderr).toMatch(/\d+ migration\(s\) applied\.\n$/);
  });

  it('reports an up-to-date database the second time', async () => {
    const db = tempDatabase();
    await petstore(db, ['migrate']);

    const again = await petstore(db, ['migrate']);

    expect(again.code).toBe(0);
    expect(again.stderr).toContain('is up to date; no migration to apply');
  });

  it('--status lists the pending migrations and applies none of them', async () => {
    const db = tempDatabase();

    const before = await petstore(db, ['migrate', '--status']);
    expect(before.code).toBe(0);
    expect(before.stdout).toMatch(/ {2}pending {2}\S+pets\n/);
    expect(before.stdout).not.toContain('applied ');
    const pending = Number(/(\d+) migration\(s\) pending/.exec(before.stdout)?.[1]);
    expect(pending).toBeGreaterThan(0);
    // Still pending: --status changed nothing.
    const applied = await petstore(db, ['migrate']);
    expect(applied.stderr).toContain(`${pending} migration(s) applied.`);

    const after = await petstore(db, ['migrate', '--status']);
    expect(after.stdout).toMatch(/ {2}applied {2}\S+pets\n/);
    expect(after.stdout).toContain('Up to date; no migration to apply.');
  });

  it('leaves a database that other commands created up to date', async () => {
    const db = tempDatabase();
    await petstore(db, ['keys', 'list']);

    expect((await petstore(db, ['migrate'])).stderr).toContain('is up to date');
  });
});
