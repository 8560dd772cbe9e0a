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
 * parses and plans each once per connection, not on every request.
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
  });
  afterAll(async () => {
    await db?.destroy();
    await storage?.close();
  });

  const prepared = async () =>
    (
      await sql<{
        name: string;
        statement: string;
        generic_plans: bigint;
      }>`SELECT name, statement, generic_plans FROM pg_prepared_statements ORDER BY name`.execute(
        db,
      )
    ).rows;

  it('prepares each read once per connection, keeps the generic plan of a page, and answers as before', async () => {
    const pets = new PostgresPetStore(db, () => 0, 1);
    // PostgreSQL tries custom plans for a statement's first five runs, then may keep the generic one.
    for (let round = 0; round < 8; round++) {
      expect((await pets.list({ afterId: 0, limit: 3 })).map((p) => p.id)).toEqual([1, 2, 3]);
      expect((await pets.list({ afterId: 28, limit: 3 })).map((p) => p.id)).toEqual([29, 30]);
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
    // One statement per text (a page per size), each prepared once whatever the values. Their
    // names come from a counter in the module, so their order depends on what ran before.
    const texts = statements.map((s) => s.statement.replace(/\s+/g, ' '));
    expect(texts).toHaveLength(3);
    expect(texts).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/where "id" = \$1$/),
        expect.stringMatching(/where "id" > \$1 order by "id" limit 3$/),
        expect.stringMatching(/where \("status", "id"\) > \(\$1, \$2\) .* limit 2$/),
      ]),
    );
    // The pages run their generic plan: planned once, not on every call.
    const pages = statements.filter((s) => s.statement.includes('limit'));
    expect(pages).toHaveLength(2);
    for (const page of pages) expect(page.generic_plans).toBeGreaterThan(0n);
  });

  it('does not prepare a page size the API never asks for', async () => {
    const pets = new PostgresPetStore(db, () => 0, 1);
    const before = (await prepared()).length;
    expect(await pets.list({ afterId: 0, limit: 1_000 })).toHaveLength(30);
    expect(await prepared()).toHaveLength(before);
  });
});
