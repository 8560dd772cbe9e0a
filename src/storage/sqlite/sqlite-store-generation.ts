import { statSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import type { GenerationReading, StoreGeneration } from '../../domain/ports.js';

/** The identity (device and inode) of the file at a path; throws ENOENT once it is gone. */
export function fileIdentity(path: string): string {
  const stat = statSync(path, { bigint: true });
  return `${stat.dev}.${stat.ino}`;
}

/**
 * The store generation on SQLite, as one text value of three parts:
 * - the counter row, bumped by `petstore cache-reset` and by every migration applied;
 * - `PRAGMA schema_version`, which every schema change moves, and so does a restore written into
 *   the live database through SQLite's backup API (the sqlite3 shell's `.restore`), whatever
 *   counter row the copy holds;
 * - the identity (device and inode) of the file at the database's path: a copy moved over the
 *   path changes it. The server keeps reading the file it opened, though (see docs/caching.md).
 * `PRAGMA data_version` is not part of it: the commit worker is another connection, so it moves
 * at every create.
 */
export class SqliteStoreGeneration implements StoreGeneration {
  private counter: BetterSqlite3.Statement | undefined;

  constructor(
    private readonly raw: BetterSqlite3.Database,
    /** The database file, or `:memory:`, which has no identity beyond the connection. */
    private readonly path: string,
    /** Asked before each statement (sqlite-connection.ts, indexGuard). */
    private readonly guard: () => void,
  ) {}

  async read(): Promise<GenerationReading> {
    // Prepared on first use, once the migrations that create the tables have run.
    this.counter ??= this.raw.prepare(
      `SELECT (SELECT value FROM store_generation WHERE id = 1) AS data,
        (SELECT value FROM api_key_changes WHERE id = 1) AS keys`,
    );
    this.guard();
    const row = this.counter.get() as { data: unknown; keys: unknown } | undefined;
    if (row?.data == null || row.keys == null) {
      throw new Error('the store_generation or api_key_changes row is missing');
    }
    const schema: unknown = this.raw.pragma('schema_version', { simple: true });
    let file = 'memory';
    if (this.path !== ':memory:') file = fileIdentity(this.path);
    return { data: `${String(row.data)}:${String(schema)}:${file}`, keys: String(row.keys) };
  }

  async bump(): Promise<void> {
    this.guard();
    this.raw.prepare('UPDATE store_generation SET value = value + 1 WHERE id = 1').run();
  }
}
