import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_SIZE, PET_STATUSES, type PetStatus } from '../../src/domain/pets/pet.js';
import type { Storage } from '../../src/domain/ports.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { SqlitePetStore } from '../../src/storage/sqlite/sqlite-pet-store.js';

// SQLite compiles a statement again whenever a new value is bound to a parameter its planner
// looked at (`LIMIT ?`, `status = ?`): the pages keep those in the SQL text and bind the cursor only.
describe('SQLite page statements', () => {
  let storage: Storage;
  let pets: SqlitePetStore;
  const kinds: Array<PetStatus | undefined> = [undefined, ...PET_STATUSES];

  beforeAll(async () => {
    storage = await createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true });
    if (!(storage.pets instanceof SqlitePetStore)) throw new Error('not the SQLite pet store');
    pets = storage.pets;
    await pets.insertMany(
      Array.from({ length: 30 }, (_, i) => ({
        name: `pet ${i}`,
        categoryId: 1n,
        status: PET_STATUSES[i % PET_STATUSES.length],
      })),
    );
  });
  afterAll(() => storage.close());

  it('binds only the cursor: the status and the page size are in the SQL text', () => {
    for (const status of kinds) {
      for (const limit of [1, 21, PAGE_SIZE.max + 1]) {
        const text = pets.pageSql(status, limit);
        expect(text.match(/\?/g), text).toHaveLength(1);
        expect(text).toMatch(new RegExp(`"id" > \\?.* limit ${limit}$`));
        if (status !== undefined) expect(text).toContain(`"status" = '${status}'`);
      }
    }
  });

  it('answers the same rows as the query with every value bound', async () => {
    for (const status of kinds) {
      for (const afterId of [0, 7, 20]) {
        const page = await pets.list({ afterId, status, limit: 5 });
        // 102 rows is no page size the API asks for: it runs the statement with the limit bound.
        const all = await pets.list({ afterId, status, limit: PAGE_SIZE.max + 2 });
        expect(page).toEqual(all.slice(0, 5));
        expect(page.length).toBeGreaterThan(0);
        for (const pet of page) {
          expect(pet.id).toBeGreaterThan(afterId);
          if (status !== undefined) expect(pet.status).toBe(status);
        }
      }
    }
  });

  it('prepares at most one statement per kind of page and page size', async () => {
    for (let round = 0; round < 2; round++) {
      for (const status of kinds) {
        for (let limit = 1; limit <= PAGE_SIZE.max + 1; limit++) {
          await pets.list({ afterId: round, status, limit });
        }
        await pets.list({ afterId: 0, status, limit: PAGE_SIZE.max + 2 + round });
      }
    }
    expect(pets.preparedPages).toBe(kinds.length * (PAGE_SIZE.max + 1));
  });
});
