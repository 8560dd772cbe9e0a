import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { PetService } from '../../src/domain/pets/pet-service.js';
import type { IdempotencyCompletion, Storage } from '../../src/domain/ports.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { overlayStorage } from '../helpers/storage-overlay.js';
import { TestClock } from '../helpers/test-clock.js';

describe('PetService.create with an Idempotency-Key', () => {
  let storage: Storage;
  let released: IdempotencyCompletion[];
  const scope = { apiKeyId: 'key_test', key: 'k-1' };
  const rex = { name: 'Rex', categoryId: 3n };

  beforeEach(async () => {
    storage = await createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true });
    released = [];
  });
  afterEach(async () => {
    await storage.close();
  });

  function serviceWith(createForClaim: Storage['pets']['createForClaim']): PetService {
    const wrapped = overlayStorage(storage, {
      pets: { createForClaim },
      idempotency: {
        release: async (claim) => {
          released.push(claim);
          await storage.idempotency.release(claim);
        },
      },
    });
    return new PetService(wrapped.pets, wrapped.idempotency, new TestClock());
  }

  it('words a lost claim as 409 idempotency_key_in_use, and leaves the claim to its new owner', async () => {
    const pets = serviceWith(async () => ({ kind: 'claim_lost' }));
    const refusal = await pets.create(rex, scope).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(DomainError);
    expect(refusal).toMatchObject({ code: 'idempotency_key_in_use' });
    expect(released).toEqual([]);
  });

  it('releases the claim when storing the pet fails, so a retry can use the key', async () => {
    const pets = serviceWith(async () => {
      throw new Error('disk on fire');
    });
    await expect(pets.create(rex, scope)).rejects.toThrow('disk on fire');
    expect(released).toHaveLength(1);
    const retry = new PetService(storage.pets, storage.idempotency, new TestClock());
    await expect(retry.create(rex, scope)).resolves.toMatchObject({ replayed: false });
  });
});

describe('PetService.list', () => {
  it('calls a full page final only when the pet after it has settled', async () => {
    const storage = await createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true });
    try {
      for (let i = 0; i < 3; i++) await storage.pets.create({ name: `P${i}`, categoryId: 1n });
      let settled = 0;
      const pets = new PetService(
        overlayStorage(storage, { pets: { settledThrough: () => settled } }).pets,
        storage.idempotency,
        new TestClock(),
      );
      const page = () => pets.list({ limit: 2 });
      expect((await page()).final).toBe(false);
      settled = 2;
      expect((await page()).final).toBe(false);
      settled = 3;
      expect((await page()).final).toBe(true);
      // The last page is never final: more pets may come.
      expect((await pets.list({ limit: 5 })).final).toBe(false);
    } finally {
      await storage.close();
    }
  });
});
