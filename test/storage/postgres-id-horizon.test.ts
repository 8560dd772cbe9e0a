import { describe, expect, it } from 'vitest';
import { createStorage } from '../../src/storage/create-storage.js';
import { openPostgres } from '../../src/storage/postgres/postgres-connection.js';
import { IdHorizon } from '../../src/storage/postgres/postgres-id-horizon.js';
import { postgresFor, usePostgresSchemas } from '../helpers/postgres.js';

const SUITE = 'PostgreSQL id horizon';
const available = await postgresFor(SUITE);

describe.runIf(available)(SUITE, () => {
  const schemas = usePostgresSchemas();

  it('puts an id below the horizon only once the highest id seen that long ago covers it', async () => {
    const storage = await createStorage(schemas.config(), { migrate: true });
    const { db } = openPostgres(schemas.config());
    let now = 0;
    const horizon = new IdHorizon(db, 10_000, () => now);
    try {
      const first = await storage.pets.create({ name: 'Horizon', categoryId: 1n });
      expect(horizon.idHorizon()).toBe(0); // nothing polled yet
      await horizon.poll();
      now = 9_999;
      expect(horizon.idHorizon()).toBe(0);
      const second = await storage.pets.create({ name: 'Later', categoryId: 1n });
      await horizon.poll();
      now = 10_000;
      // What was visible 10 s ago is below the horizon; the later pet is not yet.
      expect(horizon.idHorizon()).toBe(first.id);
      now = 19_998;
      expect(horizon.idHorizon()).toBe(first.id);
      now = 19_999;
      expect(horizon.idHorizon()).toBe(second.id);
    } finally {
      await db.destroy();
      await storage.close();
    }
  });

  it('leaves a page of a PostgreSQL listing above the horizon at first, so it is not cached yet', async () => {
    const storage = await createStorage(schemas.config(), { migrate: true });
    try {
      await storage.pets.create({ name: 'Fresh', categoryId: 1n });
      expect(storage.pets.idHorizon()).toBe(0);
    } finally {
      await storage.close();
    }
  });
});
