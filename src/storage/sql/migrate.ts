import { type Kysely, type Migration, type MigrationResultSet, Migrator } from 'kysely';
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely documents Kysely<any> as the migration handle type
type AnyDb = Kysely<any>;

function migrator(db: AnyDb, migrations: Record<string, Migration>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrations } });
}

function check({ error, results }: MigrationResultSet): string[] {
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

/** Applies every pending migration; returns what it did, one line per migration. */
export async function migrateToLatest(
  db: AnyDb,
  migrations: Record<string, Migration>,
): Promise<string[]> {
  return check(await migrator(db, migrations).migrateToLatest());
}

/** Reverts the newest applied migration (for tests and operators). */
export async function migrateDown(
  db: AnyDb,
  migrations: Record<string, Migration>,
): Promise<string[]> {
  return check(await migrator(db, migrations).migrateDown());
}
