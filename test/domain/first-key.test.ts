import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiKeyService } from '../../src/domain/api-keys/api-key-service.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { TestClock } from '../helpers/test-clock.js';

const dir = mkdtempSync(join(tmpdir(), 'petstore-first-key-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('ApiKeyService.ensureFirstKey', () => {
  it('creates exactly one key when several instances start together on an empty database', async () => {
    const path = join(dir, 'race.db');
    // Four connections to one file, as four processes would have (migrated once, beforehand).
    const storages = [await createStorage({ kind: 'sqlite', path }, { migrate: true })];
    for (let i = 0; i < 3; i++) storages.push(await createStorage({ kind: 'sqlite', path }));
    try {
      const services = storages.flatMap((storage) =>
        Array.from(
          { length: 3 },
          () => new ApiKeyService(storage.apiKeys, new TestClock(), 'production'),
        ),
      );
      const created = await Promise.all(services.map((s) => s.ensureFirstKey()));
      expect(created.filter((c) => c !== undefined)).toHaveLength(1);
      await expect(storages[0]?.apiKeys.count()).resolves.toBe(1);
      const [first] = created.filter((c) => c !== undefined);
      const auth = await services[5]?.authenticate(first?.key);
      expect(auth).toMatchObject({ ok: true, key: { plan: 'free', label: 'first start' } });
    } finally {
      await Promise.all(storages.map((s) => s.close()));
    }
  });

  it('does nothing when a key exists', async () => {
    const storage = await createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true });
    try {
      const keys = new ApiKeyService(storage.apiKeys, new TestClock(), 'production');
      await keys.create({ plan: 'pro' });
      await expect(keys.ensureFirstKey()).resolves.toBeUndefined();
      await expect(storage.apiKeys.count()).resolves.toBe(1);
    } finally {
      await storage.close();
    }
  });
});
