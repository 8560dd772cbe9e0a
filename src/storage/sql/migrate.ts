import {
  DEFAULT_MIGRATION_TABLE,
  type Kysely,
  type Migration,
  type MigrationResultSet,
  Migrator,
} from 'kysely';
import { DependencyUnavailableError } from '../../domain/errors.js';
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely documents Kysely<any> as the migration handle type
type AnyDb = Kysely<any>;

export interface MigrateOptions {
  /**
   * Where Kysely keeps its migration tables. PostgreSQL names the schema: Kysely looks for its
   * tables in every schema of the database, so a second schema would take the first one's as its own.
   */
  migrationTableSchema?: string;
  /**
   * Told of applied migrations newer than every one this release knows (a later release's, after a
   * roll back). Default: one line on stderr naming them.
   */
  onNewer?: (names: readonly string[]) => void;
}

function reportNewer(names: readonly string[]): void {
  process.stderr.write(
    `petstore: the database has migrations newer than this release, left in place: ${names.join(', ')}\n`,
  );
}

/** The names of the applied migrations, from Kysely's own table ([] before the first). */
async function appliedNames(db: AnyDb, options: MigrateOptions): Promise<string[]> {
  const schema = options.migrationTableSchema;
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  const exists = tables.some(
    (table) =>
      table.name === DEFAULT_MIGRATION_TABLE && (schema === undefined || table.schema === schema),
  );
  if (!exists) return [];
  const rows = await (schema === undefined ? db : db.withSchema(schema))
    .selectFrom(DEFAULT_MIGRATION_TABLE)
    .select('name')
    .execute();
  return rows.map((row: { name: string }) => row.name);
}

/**
 * Roll back (docs/operations.md): a release started against a database a later release migrated
 * finds migrations it does not know. Expand/contract (test/storage/migration-policy.test.ts) makes
 * them additions this release can ignore, as long as all come after every migration it knows: they
 * are left in place and named. One among its own is a gap, not a later release: refused, as is
 * reverting (`down`) past them, which only the release that knows them can do.
 */
function withNewer(
  applied: readonly string[],
  migrations: Record<string, Migration>,
  direction: 'latest' | 'down',
  options: MigrateOptions,
): Record<string, Migration> {
  const unknown = applied.filter((name) => !(name in migrations)).sort();
  if (unknown.length === 0) return migrations;
  const newestKnown = Object.keys(migrations).sort().at(-1) ?? '';
  const amongOurs = unknown.filter((name) => name.localeCompare(newestKnown) <= 0);
  if (amongOurs.length > 0) {
    throw new Error(
      `the database has applied migrations this release does not know among its own: ${amongOurs.join(', ')} ` +
        `(newest known: ${newestKnown}); it was migrated by another line of releases`,
    );
  }
  if (direction === 'down') {
    throw new Error(
      `the newest applied migrations belong to a later release (${unknown.join(', ')}): revert them with that release`,
    );
  }
  (options.onNewer ?? reportNewer)(unknown);
  const later = (name: string): Migration => ({
    up: () => Promise.reject(new Error(`${name} belongs to a later release`)),
  });
  return { ...migrations, ...Object.fromEntries(unknown.map((name) => [name, later(name)])) };
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

function nothingPending(
  applied: readonly string[],
  migrations: Record<string, Migration>,
): boolean {
  const done = new Set(applied);
  return Object.keys(migrations).every((name) => done.has(name));
}

/**
 * Applies every pending migration (`latest`), or reverts the newest applied one (`down`, for tests
 * and operators); returns what it did, one line per migration. Applied migrations of a later
 * release are tolerated (see withNewer).
 */
export async function migrate(
  db: AnyDb,
  migrations: Record<string, Migration>,
  direction: 'latest' | 'down',
  options: MigrateOptions = {},
): Promise<string[]> {
  const applied = await appliedNames(db, options);
  const all = withNewer(applied, migrations, direction, options);
  // Every start after a release's first finds nothing to apply: Kysely's Migrator would still
  // look its tables up again and take its lock in a transaction, so it is not built then.
  if (direction === 'latest' && nothingPending(applied, migrations)) return [];
  const runner = migrator(db, all, options);
  return check(await (direction === 'latest' ? runner.migrateToLatest() : runner.migrateDown()));
}

/**
 * `migrate(…, 'latest')` when it would apply nothing, answered from one read of the applied
 * migrations ([], with a later release's named as migrate names them); undefined when something is
 * pending, for the caller to migrate under its lock.
 */
export async function migrateIfUpToDate(
  db: AnyDb,
  migrations: Record<string, Migration>,
  options: MigrateOptions = {},
): Promise<string[] | undefined> {
  const applied = await appliedNames(db, options);
  if (!nothingPending(applied, migrations)) return undefined;
  withNewer(applied, migrations, 'latest', options);
  return [];
}

/** What `migrate` would do, without doing it: applied, pending, and a later release's. */
export interface MigrationStatus {
  readonly applied: readonly string[];
  readonly pending: readonly string[];
  readonly newer: readonly string[];
}

export async function migrationStatus(
  db: AnyDb,
  migrations: Record<string, Migration>,
  options: MigrateOptions = {},
): Promise<MigrationStatus> {
  const applied = await appliedNames(db, options);
  const done = new Set(applied);
  return {
    applied: applied.filter((name) => name in migrations).sort(),
    pending: Object.keys(migrations)
      .filter((name) => !done.has(name))
      .sort(),
    newer: applied.filter((name) => !(name in migrations)).sort(),
  };
}
