import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Storage } from '../../src/domain/ports.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { openPostgres } from '../../src/storage/postgres/postgres-connection.js';
import { PostgresPetStore } from '../../src/storage/postgres/postgres-pet-store.js';
import type { Database } from '../../src/storage/sql/database.js';
import { postgresFor, usePostgresSchemas } from '../helpers/postgres.js';

/**
 * The pet reads (a page, a page of one status, a pet) are named prepared statements: the server
 * parses and plans each once per connection, not on every request (bench/README.md, "Findings").
 * Checked on the server itself: pg_prepared_statements of the store's one connection.
 */
const SUITE = 'prepared pet reads on PostgreSQL';
const available = await postgresFor(SUITE);

describe.runIf(available)(SUITE, () => {
  const schemas = usePostgresSchemas();
  let storage: Storage;
  let db: Kysely<Database>;

  beforeAll(async () => {
    storage = await createStorage(schemas.config(), { migrate: true });
    await storage.pets.insertMany(
      Array.from({ length: 30 }, (_, i) => ({
        name: `pet ${i + 1}`,
        categoryId: 1n,
        status: i % 2 === 0 ? ('available' as const) : ('sold' as const),
      })),
    );
    // One connection, so the statements the store prepares are the ones the query below sees.
    ({ db } = openPostgres(schemas.config({ poolMax: 1 })));
  }, 30_000);
  afterAll(async () => {
    await db?.destroy();
    await storage?.close();
  });

  const prepared = async () =>
    (
      await sql<{
        name: string;
        statement: string;
      }>`SELECT name, statement FROM pg_prepared_statements ORDER BY name`.execute(db)
    ).rows;

  it('prepares each read once per connection and answers as before', async () => {
    const pets = new PostgresPetStore(db, () => 0, 1);
    for (let round = 0; round < 3; round++) {
      expect((await pets.list({ afterId: 0, limit: 3 })).map((p) => p.id)).toEqual([1, 2, 3]);
      expect((await pets.list({ afterId: 28, limit: 5 })).map((p) => p.id)).toEqual([29, 30]);
      const sold = await pets.list({ afterId: 2, limit: 2, status: 'sold' });
      expect(sold.map((p) => [p.id, p.status])).toEqual([
        [4, 'sold'],
        [6, 'sold'],
      ]);
      expect(await pets.get(7n)).toEqual({
        id: 7,
        name: 'pet 7',
        categoryId: 1n,
        status: 'available',
      });
      expect(await pets.get(31n)).toBeUndefined();
    }
    const statements = await prepared();
    // Three texts, each prepared once whatever the values and however often it ran.
    expect(statements).toHaveLength(3);
    expect(new Set(statements.map((s) => s.name)).size).toBe(3);
    const texts = statements.map((s) => s.statement).join('\n');
    expect(texts).toMatch(/where "id" > \$1 order by "id" limit \$2/);
    expect(texts).toMatch(/where \("status", "id"\) > \(\$1, \$2\)/);
    expect(texts).toMatch(/where "id" = \$1/);
  });
});
