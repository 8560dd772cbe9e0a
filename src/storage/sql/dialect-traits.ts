import type { CompiledQuery } from 'kysely';

/**
 * How a backend commits the shared stores' writes. PostgreSQL runs them on its pool; SQLite hands
 * them to its single writer (the commit worker), so that no write waits on the event loop.
 */
export interface SqlWrites {
  /** Runs the statements in order in one transaction; resolves how many rows each one changed. */
  run(statements: readonly CompiledQuery[]): Promise<number[]>;
}

/**
 * Whose clock dates what servers on other hosts compare with theirs (a ban's lift): `database`
 * (what the service uses) the database server's, where it has one they share; `caller` the time
 * each call passes, so tests that move their clock move these times too.
 */
export type StorageTime = 'database' | 'caller';

/**
 * What the shared api-key and idempotency stores do differently per engine; every other query is
 * the same SQL. Each backend folder passes its own when it builds the stores.
 */
export interface DialectTraits {
  /**
   * Statements that run before insertIfNone's single INSERT ... SELECT, in its transaction, so that
   * nobody else's can run between its existence check and its insert. PostgreSQL: an advisory
   * lock, since under READ COMMITTED two such statements would both see an empty table. SQLite:
   * none, since one statement holds the single write lock from start to end.
   */
  firstKeyLock: readonly CompiledQuery[];
  /**
   * Whether `SELECT ... FOR UPDATE SKIP LOCKED` exists. With it, concurrent purges take disjoint
   * batches instead of waiting on each other's rows; SQLite has one writer at a time anyway.
   */
  skipLocked: boolean;
  /**
   * The SQL of a new `seq` for an existing key (after a roll), so that the incremental loads of
   * known key hashes pick up its new hash. PostgreSQL: the identity's next value; SQLite: one
   * above the highest, under its single write lock.
   */
  nextKeySeq: string;
  /**
   * The query of the database's clock (epoch ms, as `now`), for times written by one host and
   * compared by servers on others, or null where the caller's clock is the servers' anyway.
   * PostgreSQL: its server's clock, one for every host (null with StorageTime `caller`). SQLite:
   * null, since every process using the file runs on the host that has it, whose clock the caller
   * reads (tests inject theirs).
   */
  databaseNow: CompiledQuery<{ now: bigint | number | string }> | null;
}
