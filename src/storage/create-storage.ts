import type { DatabaseConfig } from '../config/config.js';
import type { Storage } from '../domain/ports.js';
import type { StorageObserver } from './observer.js';
import type { StorageTime } from './sql/dialect-traits.js';

/** Picks the backend the configuration names; only server-main.ts and the CLI call this. */
export async function createStorage(
  database: DatabaseConfig,
  options: {
    migrate?: boolean;
    /** Refuse an SQLite path where no file exists instead of creating a database there. */
    mustExist?: boolean;
    /** Told of statements, commits and the pool (the metrics); none by default. */
    observer?: StorageObserver;
    /** `database` by default; see StorageTime. */
    time?: StorageTime;
  } = {},
): Promise<Storage> {
  // Each backend's driver is loaded only when configured: pg alone is some 15 MB of memory that a
  // SQLite deployment never uses.
  const storage =
    database.kind === 'postgres'
      ? (await import('./postgres/postgres-storage.js')).createPostgresStorage(
          database,
          options.observer,
          options.time,
        )
      : (await import('./sqlite/sqlite-storage.js')).createSqliteStorage(
          database.path,
          { mustExist: options.mustExist },
          options.observer,
        );
  try {
    if (options.migrate) await storage.migrate();
    return storage;
  } catch (error) {
    await storage.close();
    throw error;
  }
}
