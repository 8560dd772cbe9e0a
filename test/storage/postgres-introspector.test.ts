import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { createStorage } from '../../src/storage/create-storage.js';
import { openPostgres } from '../../src/storage/postgres/postgres-connection.js';
import {
  POSTGRES_URL,
  postgresConfig,
  postgresFor,
  urlWithSchema,
  usePostgresSchemas,
} from '../helpers/postgres.js';

/*
 * The migrator asks the database which tables exist. Kysely's own answer read every schema and
 * failed whenever another session dropped a schema or table meanwhile, anywhere in the database
 * (seen as 'schema … does not exist' when instances or test files started beside others ending).
 */
const SUITE = 'PostgreSQL table introspection beside sessions that drop schemas';
const available = await postgresFor(SUITE);

describe.runIf(available)(SUITE, () => {
  const schemas = usePostgresSchemas();
  const connection = () => openPostgres(schemas.config());

  beforeAll(async () => {
    const storage = await createStorage(schemas.config(), { migrate: true });
    await storage.close();
  });

  /** Another session creating and dropping schemas with a table, until stopped. */
  function churn(): { stop(): Promise<number> } {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    let running = true;
    let dropped = 0;
    const done = (async () => {
      await client.connect();
      const name = `petstore_churn_${process.pid}_${Date.now()}`;
      while (running) {
        await client.query(`CREATE SCHEMA ${name}; CREATE TABLE ${name}.t (id serial PRIMARY KEY)`);
        await client.query(`DROP SCHEMA ${name} CASCADE`);
        dropped += 1;
      }
      await client.end();
    })();
    return {
      async stop() {
        running = false;
        await done;
        return dropped;
      },
    };
  }

  it('names the tables of its own schema only, the migrator tables when asked', async () => {
    const { db } = connection();
    try {
      const other = `${schemas.schema}_other`;
      await schemas.admin(`CREATE SCHEMA ${other}; CREATE TABLE ${other}.pets (id int)`);
      try {
        const tables = await db.introspection.getTables();
        const names = tables.map((table) => table.name);
        expect(names).toContain('pets');
        expect(names).toContain('api_keys');
        expect(names).not.toContain('kysely_migration');
        expect(new Set(tables.map((table) => table.schema))).toEqual(new Set([schemas.schema]));
        const pets = tables.find((table) => table.name === 'pets');
        expect(pets?.columns.find((column) => column.name === 'id')).toMatchObject({
          isAutoIncrementing: true,
          isNullable: false,
        });
        const internal = await db.introspection.getTables({ withInternalKyselyTables: true });
        expect(internal.map((table) => table.name)).toContain('kysely_migration');
      } finally {
        await schemas.admin(`DROP SCHEMA ${other} CASCADE`);
      }
    } finally {
      await db.destroy();
    }
  });

  it('answers every time while another session drops schemas, and migrates beside it', async () => {
    const { db } = connection();
    const other = churn();
    const failures: string[] = [];
    let asked = 0;
    try {
      const until = Date.now() + 2_000;
      while (Date.now() < until) {
        asked += 1;
        await db.introspection
          .getTables({ withInternalKyselyTables: true })
          .catch((error: unknown) => void failures.push(String(error)));
      }
      for (let i = 0; i < 5; i++) {
        const name = await schemas.fresh();
        const storage = await createStorage(postgresConfig(urlWithSchema(name)), {
          migrate: true,
        }).catch((error: unknown) => void failures.push(String(error)));
        await storage?.close();
      }
    } finally {
      const dropped = await other.stop();
      await db.destroy();
      console.info(`[introspection] ${asked} asked while ${dropped} schemas were dropped beside`);
      expect(dropped).toBeGreaterThan(10);
    }
    expect(failures).toEqual([]);
  });
});
