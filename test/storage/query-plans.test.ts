import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Storage } from '../../src/domain/ports.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { openPostgres } from '../../src/storage/postgres/postgres-connection.js';
import { openSqlite } from '../../src/storage/sqlite/sqlite-connection.js';
import type { Database } from '../../src/storage/sql/database.js';
import { petQueries } from '../../src/storage/sql/pet-queries.js';
import { compileOnce } from '../../src/storage/sql/prepared-sql.js';
import { postgresFor, usePostgresSchemas } from '../helpers/postgres.js';

/**
 * Flat cost as data grows, checked without a clock: every pet query is served by an index, in
 * index order, whatever the data (no full scan, no sort of the matching rows), so a first page of
 * a rare status held only by the newest pets costs what any page costs.
 */
const LIST_BY_STATUS = (db: Kysely<Database>) =>
  compileOnce(
    (p: { afterId: number; limit: number; status: string }) => petQueries.listByStatus(db, p),
    ['afterId', 'limit', 'status'],
  ).sql;
const LIST_ALL = (db: Kysely<Database>) =>
  compileOnce(
    (p: { afterId: number; limit: number }) => petQueries.listAll(db, p),
    ['afterId', 'limit'],
  ).sql;

async function seed(storage: Storage, count: number): Promise<void> {
  for (let done = 0; done < count; done += 1_000) {
    await storage.pets.insertMany(
      Array.from({ length: 1_000 }, (_, i) => ({
        name: `Plan ${done + i}`,
        categoryId: 1n,
        // The newest 5 alone are sold: a rare status, only at the end of the table.
        ...(done + i >= count - 5 ? { status: 'sold' as const } : { status: 'available' as const }),
      })),
    );
  }
  await storage.analyze();
}

describe('query plans on SQLite', () => {
  it('lists by status through the (status, id) index and all pets by the primary key, unsorted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-plans-'));
    const path = join(dir, 'plans.db');
    const storage = await createStorage({ kind: 'sqlite', path }, { migrate: true });
    const { db, raw } = openSqlite(path);
    try {
      await seed(storage, 5_000);
      const plan = (query: string, ...params: unknown[]) =>
        (raw.prepare(`EXPLAIN QUERY PLAN ${query}`).all(...params) as Array<{ detail: string }>)
          .map((row) => row.detail)
          .join(' | ');
      const byStatus = plan(LIST_BY_STATUS(db), 0, 'sold', 21);
      expect(byStatus).toMatch(
        /USING (COVERING )?INDEX pets_status_id \(status=\? AND (rowid|id)>\?\)/,
      );
      expect(byStatus).not.toMatch(/TEMP B-TREE|SCAN/);
      const all = plan(LIST_ALL(db), 0, 21);
      expect(all).toMatch(/USING INTEGER PRIMARY KEY \(rowid>\?\)/);
      expect(all).not.toMatch(/TEMP B-TREE/);
    } finally {
      raw.close();
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const SUITE = 'query plans on PostgreSQL';
const available = await postgresFor(SUITE);

describe.runIf(available)(SUITE, () => {
  const schemas = usePostgresSchemas();
  let storage: Storage;
  let db: Kysely<Database>;

  beforeAll(async () => {
    storage = await createStorage(schemas.config(), { migrate: true });
    await seed(storage, 20_000);
    ({ db } = openPostgres(schemas.config()));
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await storage?.close();
  });

  async function plan(query: string, params: unknown[]): Promise<string> {
    // The planner's own choice, with statistics from analyze(): no setting forces an index.
    const numbered = query.replace(/\$(\d+)/g, (_, n: string) => {
      const value = params[Number(n) - 1];
      return typeof value === 'string' ? `'${value}'` : String(value);
    });
    const { rows } = await sql.raw<{ 'QUERY PLAN': string }>(`EXPLAIN ${numbered}`).execute(db);
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  }

  it('finds the first page of a rare status held by the newest pets through the (status, id) index, unsorted', async () => {
    const text = await plan(LIST_BY_STATUS(db), [0, 'sold', 21]);
    expect(text).toMatch(/Index (Only )?Scan using pets_status_id/);
    expect(text).not.toMatch(/Sort|Seq Scan/);
  });

  it('lists a common status and all pets in index order, unsorted', async () => {
    const common = await plan(LIST_BY_STATUS(db), [0, 'available', 21]);
    expect(common).not.toMatch(/Sort/);
    const all = await plan(LIST_ALL(db), [0, 21]);
    expect(all).toMatch(/Index Scan using pets_pkey/);
    expect(all).not.toMatch(/Sort|Seq Scan/);
  });
});
