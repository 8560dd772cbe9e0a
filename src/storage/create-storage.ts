import type { DatabaseConfig } from '../config/config.js';
import type { Storage } from '../domain/ports.js';
import { createPostgresStorage } from './postgres/postgres-storage.js';
import { createSqliteStorage } from './sqlite/sqlite-storage.js';

/** Picks the backend the configuration names; only main.ts and the CLI call this. */
export async function createStorage(
  database: DatabaseConfig,
  options: {
    migrate?: boolean;
    /** Refuse an SQLite path where no file exists instead of creating a database there. */
    mustExist?: boolean;
  } = {},
): Promise<Storage> {
  const storage =
    database.kind === 'postgres'
      ? createPostgresStorage(database)
      : createSqliteStorage(database.path, { mustExist: options.mustExist });
  try {
    if (options.migrate) await storage.migrate();
    return storage;
  } catch (error) {
    await storage.close();
    throw error;
  }
}
