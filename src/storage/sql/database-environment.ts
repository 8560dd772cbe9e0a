import { type Kysely, sql } from 'kysely';
import type { KeyEnvironment } from '../../domain/api-keys/api-key.js';

/**
 * The PETSTORE_ENV the database belongs to (the `settings` row `environment`, migration
 * 2026-12-02-14-database-environment). With `claim`, a database that records none is first given
 * that one; a racing first claim loses to the one already written (ON CONFLICT DO NOTHING), so
 * every caller reads back the one that won. Undefined when the database predates the migration
 * (the table is missing) or, without `claim`, records none yet.
 */
export async function databaseEnvironment<Schema>(
  db: Kysely<Schema>,
  claim: KeyEnvironment | undefined,
): Promise<KeyEnvironment | undefined> {
  try {
    if (claim !== undefined) {
      await sql`INSERT INTO settings (name, value) VALUES ('environment', ${claim})
        ON CONFLICT (name) DO NOTHING`.execute(db);
    }
    const { rows } = await sql<{
      value: string;
    }>`SELECT value FROM settings WHERE name = 'environment'`.execute(db);
    const value = rows[0]?.value;
    if (value === undefined) return undefined;
    if (value !== 'production' && value !== 'staging') {
      throw new Error(`the database records an unknown environment ${JSON.stringify(value)}`);
    }
    return value;
  } catch (error) {
    if (isMissingSettingsTable(error)) return undefined;
    throw error;
  }
}

/** SQLite's and PostgreSQL's (42P01) answer to a query on a table that does not exist. */
function isMissingSettingsTable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  if ('code' in error && error.code === '42P01') return true;
  return (
    error instanceof Error &&
    /no such table: settings|relation "settings" does not exist/.test(error.message)
  );
}
