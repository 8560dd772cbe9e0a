import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import type { DatabaseConfig } from '../../src/config/config.js';
import { requireService } from './services.js';

export type PostgresDatabaseConfig = Extract<DatabaseConfig, { kind: 'postgres' }>;

/** The server the tests use; any database on it works, each test file keeps to its own schemas. */
export const POSTGRES_URL =
  process.env.PETSTORE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Whether `suite` can run: skipped with a warning without PostgreSQL, a failing test in CI (see
 * requireService). Call it at the top of a test file.
 */
export function postgresFor(suite: string): Promise<boolean> {
  return requireService('postgres', suite);
}

/** The URL whose connections use `schema` first (the search_path, sent at connection start). */
export function urlWithSchema(schema: string, base: string = POSTGRES_URL): string {
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** The same URL, pointed at another port on loopback (a proxy, or a port nothing listens on). */
export function withPort(url: string, port: number): string {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(port);
  return parsed.toString();
}

export function postgresConfig(
  url: string,
  overrides: Partial<Omit<PostgresDatabaseConfig, 'kind' | 'url'>> = {},
): PostgresDatabaseConfig {
  return {
    kind: 'postgres',
    url,
    poolMax: 5,
    statementTimeoutMs: 5_000,
    connectTimeoutMs: 3_000,
    ...overrides,
  };
}

export interface PostgresSchemas {
  /** The file's own schema, created before its first test. */
  readonly schema: string;
  /** DATABASE_URL of the file's schema, for the CLI and loadConfig. */
  readonly url: string;
  config(overrides?: Partial<Omit<PostgresDatabaseConfig, 'kind' | 'url'>>): PostgresDatabaseConfig;
  /** Another new, empty schema, dropped with the rest when the file ends; returns its name. */
  fresh(): Promise<string>;
  /** A query on the server as its superuser, outside every schema of the service (qualify names). */
  admin<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  /**
   * Runs `statement` (a LOCK or SELECT ... FOR UPDATE) in a transaction of its own that stays
   * open until the returned function commits it.
   */
  hold(statement: string): Promise<() => Promise<void>>;
}

function schemaName(): string {
  return `petstore_test_${randomBytes(6).toString('hex')}`;
}

/** A new empty schema on the test server, outside any test hook; `drop` removes it and its tables. */
export async function createTestSchema(): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = schemaName();
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`);
  } finally {
    await admin.end();
  }
  return {
    url: urlWithSchema(schema),
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * Gives the calling test file schemas of its own on the shared server: one created before its
 * tests, more on demand, all dropped after them. Register it inside a describe that only runs
 * when postgresFor() said yes.
 */
export function usePostgresSchemas(): PostgresSchemas {
  const schema = schemaName();
  const created: string[] = [];
  const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 4 });
  admin.on('error', () => undefined);

  const create = async (name: string) => {
    await admin.query(`CREATE SCHEMA ${pg.escapeIdentifier(name)}`);
    created.push(name);
  };

  beforeAll(async () => {
    await create(schema);
  });

  afterAll(async () => {
    for (const name of created.splice(0)) {
      await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(name)} CASCADE`);
    }
    await admin.end();
  });

  const url = urlWithSchema(schema);
  return {
    schema,
    url,
    config: (overrides = {}) => postgresConfig(url, overrides),
    async fresh() {
      const name = schemaName();
      await create(name);
      return name;
    },
    async admin<R extends pg.QueryResultRow>(text: string, values: unknown[] = []) {
      const result = await admin.query<R>(text, values);
      return result.rows;
    },
    async hold(statement) {
      const client = await admin.connect();
      try {
        await client.query('BEGIN');
        await client.query(statement);
      } catch (error) {
        client.release(true);
        throw error;
      }
      return async () => {
        try {
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      };
    },
  };
}
