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
import { bind, compileOnce } from '../../src/storage/sql/prepared-sql.js';
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
/** PostgreSQL's form of the same page (see petQueries.listByStatusAsIndexRange). */
const LIST_BY_STATUS_RANGE = (db: Kysely<Database>) =>
  compileOnce(
    (p: { afterId: number; limit: number; status: string }) =>
      petQueries.listByStatusAsIndexRange(db, p),
    ['afterId', 'limit', 'status'],
  );
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
  });
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

  /** The plan PostgreSQL runs for the page query with these values, custom or generic. */
  async function pagePlan(
    params: { afterId: number; limit: number; status: string },
    mode: 'force_custom_plan' | 'force_generic_plan',
  ): Promise<string> {
    const query = LIST_BY_STATUS_RANGE(db);
    const values = bind(query, params).map((v) => (typeof v === 'string' ? `'${v}'` : String(v)));
    return db.connection().execute(async (connection) => {
      await sql.raw(`SET plan_cache_mode = ${mode}`).execute(connection);
      await sql.raw(`PREPARE page_plan AS ${query.sql}`).execute(connection);
      try {
        const { rows } = await sql
          .raw<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE page_plan(${values.join(', ')})`)
          .execute(connection);
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      } finally {
        await sql.raw('DEALLOCATE page_plan').execute(connection);
        await sql.raw('RESET plan_cache_mode').execute(connection);
      }
    });
  }

  it('finds the first page of a rare status held by the newest pets through the (status, id) index, unsorted', async () => {
    for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
      const text = await pagePlan({ afterId: 0, status: 'sold', limit: 21 }, mode);
      expect(text).toMatch(/Index (Only )?Scan using pets_status_id/);
      expect(text).not.toMatch(/Sort|Seq Scan|Filter/);
    }
  });

  it('reads the last page of a status through the (status, id) index when many newer pets of another status came after the statistics', async () => {
    // The bench's list-last: statistics from before a burst of inserts, which is normal between
    // two autovacuum runs. Walking the primary key instead would read every newer pet.
    const later = await createStorage(schemas.config(), { migrate: false });
    try {
      for (let i = 0; i < 30; i++) {
        await later.pets.insertMany(
          Array.from({ length: 1_000 }, (_, j) => ({
            name: `Later ${i * 1_000 + j}`,
            categoryId: 1n,
            status: 'pending' as const,
          })),
        );
      }
    } finally {
      await later.close();
    }
    for (const status of ['sold', 'available']) {
      for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
        const text = await pagePlan({ afterId: 19_990, status, limit: 21 }, mode);
        expect(text).toMatch(/Index (Only )?Scan using pets_status_id/);
        expect(text).not.toMatch(/Sort|Seq Scan|Filter|pets_pkey/);
      }
    }
  });

  it('lists a common status and all pets in index order, unsorted', async () => {
    const common = await pagePlan(
      { afterId: 0, status: 'available', limit: 21 },
      'force_generic_plan',
    );
    expect(common).not.toMatch(/Sort/);
    const all = await plan(LIST_ALL(db), [0, 21]);
    expect(all).toMatch(/Index Scan using pets_pkey/);
    expect(all).not.toMatch(/Sort|Seq Scan/);
  });
});
