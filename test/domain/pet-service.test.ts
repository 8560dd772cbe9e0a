import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { PetService } from '../../src/domain/pets/pet-service.js';
import type { Storage } from '../../src/domain/ports.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { overlayStorage } from '../helpers/storage-overlay.js';
import { TestClock } from '../helpers/test-clock.js';

describe('PetService.create with an Idempotency-Key', () => {
  let storage: Storage;
  const scope = { apiKeyId: 'key_test', key: 'k-1' };
  const rex = { name: 'Rex', categoryId: 3n };

  beforeEach(async () => {
    storage = await createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true });
  });
  afterEach(async () => {
    await storage.close();
  });

  const service = (pets: Storage['pets'] = storage.pets) =>
    new PetService(pets, storage.idempotency, new TestClock());

  it('words a key held by a running request as 409 idempotency_key_in_use', async () => {
    const busy = overlayStorage(storage, {
      pets: { createIdempotent: async () => ({ kind: 'in_progress' }) },
    });
    const refusal = await service(busy.pets)
      .create(rex, scope)
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(DomainError);
    expect(refusal).toMatchObject({ code: 'idempotency_key_in_use' });
  });

  it('answers a replay with the stored pet, and another body with 422', async () => {
    const first = await service().create(rex, scope);
    await expect(service().create(rex, scope)).resolves.toEqual({
      pet: first.pet,
      replayed: true,
    });
    const refusal = await service()
      .create({ ...rex, name: 'Max' }, scope)
      .catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'idempotency_key_reused' });
  });
});

describe('PetService.list', () => {
  it('calls a full page final only when the pet after it is below the id horizon', async () => {
    const storage = await createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true });
    try {
      for (let i = 0; i < 3; i++) await storage.pets.create({ name: `P${i}`, categoryId: 1n });
      let horizon = 0;
      const pets = new PetService(
        overlayStorage(storage, { pets: { idHorizon: () => horizon } }).pets,
        storage.idempotency,
        new TestClock(),
      );
      const page = () => pets.list({ limit: 2 });
      expect((await page()).final).toBe(false);
      horizon = 2;
      expect((await page()).final).toBe(false);
      horizon = 3;
      expect((await page()).final).toBe(true);
      // The last page is never final: more pets may come.
      expect((await pets.list({ limit: 5 })).final).toBe(false);
    } finally {
      await storage.close();
    }
  });
});
