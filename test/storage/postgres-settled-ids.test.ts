import { describe, expect, it } from 'vitest';
import { createStorage } from '../../src/storage/create-storage.js';
import { openPostgres } from '../../src/storage/postgres/postgres-connection.js';
import { SettledIds } from '../../src/storage/postgres/postgres-settled-ids.js';
import { postgresFor, usePostgresSchemas } from '../helpers/postgres.js';

const SUITE = 'PostgreSQL settled ids';
const available = await postgresFor(SUITE);

describe.runIf(available)(SUITE, () => {
  const schemas = usePostgresSchemas();

  it('calls an id settled only once the highest id seen that long ago covers it', async () => {
    const storage = await createStorage(schemas.config(), { migrate: true });
    const { db } = openPostgres(schemas.config());
    let now = 0;
    const settled = new SettledIds(db, 10_000, () => now);
    try {
      const first = await storage.pets.create({ name: 'Settles', categoryId: 1n });
      expect(settled.settledThrough()).toBe(0); // nothing polled yet
      await settled.poll();
      now = 9_999;
      expect(settled.settledThrough()).toBe(0);
      const second = await storage.pets.create({ name: 'Later', categoryId: 1n });
      await settled.poll();
      now = 10_000;
      // What was visible 10 s ago has settled; the later pet has not yet.
      expect(settled.settledThrough()).toBe(first.id);
      now = 19_998;
      expect(settled.settledThrough()).toBe(first.id);
      now = 19_999;
      expect(settled.settledThrough()).toBe(second.id);
    } finally {
      await db.destroy();
      await storage.close();
    }
  });

  it('leaves a page of a PostgreSQL listing unsettled at first, so it is not cached yet', async () => {
    const storage = await createStorage(schemas.config(), { migrate: true });
    try {
      await storage.pets.create({ name: 'Fresh', categoryId: 1n });
      expect(storage.pets.settledThrough()).toBe(0);
    } finally {
      await storage.close();
    }
  });
});
