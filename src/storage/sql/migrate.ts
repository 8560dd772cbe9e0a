import { type Kysely, type Migration, type MigrationResultSet, Migrator } from 'kysely';
import { DependencyUnavailableError } from '../../domain/errors.js';
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely documents Kysely<any> as the migration handle type
type AnyDb = Kysely<any>;

export interface MigrateOptions {
  /**
   * Where Kysely keeps its migration tables. PostgreSQL names the schema: Kysely looks for its
   * tables in every schema of the database, so a second schema would take the first one's as its own.
   */
  migrationTableSchema?: string;
}

function migrator(
  db: AnyDb,
  migrations: Record<string, Migration>,
  options: MigrateOptions,
): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: options.migrationTableSchema,
  });
}

function check({ error, results }: MigrationResultSet): string[] {
  // An outage is not a broken migration: keep its type, so callers answer 503 and retry later.
  if (error instanceof DependencyUnavailableError) throw error;
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(
      `migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return (results ?? []).map(
    (r) => `${r.direction === 'Up' ? 'applied' : 'reverted'} ${r.migrationName}`,
  );
}

/**
 * Applies every pending migration (`latest`), or reverts the newest applied one (`down`, for tests
 * and operators); returns what it did, one line per migration.
 */
export async function migrate(
  db: AnyDb,
  migrations: Record<string, Migration>,
  direction: 'latest' | 'down',
  options: MigrateOptions = {},
): Promise<string[]> {
  const runner = migrator(db, migrations, options);
  return check(await (direction === 'latest' ? runner.migrateToLatest() : runner.migrateDown()));
}
