import type { Kysely, Transaction } from 'kysely';
import type { Database } from './database.js';

/**
 * What the shared stores do differently per engine; every other query is the same SQL. Each
 * backend folder passes its own traits when it builds the stores.
 */
export interface DialectTraits {
  /**
   * Runs insertIfNone's single INSERT ... SELECT so that nobody else's can run between its existence
   * check and its insert. PostgreSQL: in a transaction holding an advisory lock, since under READ
   * COMMITTED two such statements would both see an empty table. SQLite: as it is, since one
   * statement holds the single write lock from start to end. (A transaction there would be worse:
   * a second connection of the same process would wait for it synchronously, blocking the very
   * event loop that has to commit it.)
   */
  withFirstKeyLock<T>(
    db: Kysely<Database>,
    insert: (db: Kysely<Database>) => Promise<T>,
  ): Promise<T>;
  /**
   * Whether `SELECT ... FOR UPDATE SKIP LOCKED` exists. With it, concurrent purges take disjoint
   * batches instead of waiting on each other's rows; SQLite has one writer at a time anyway.
   */
  skipLocked: boolean;
  /**
   * Bounds, inside a transaction, how long the next statements wait for a row another transaction
   * holds (an Idempotency-Key whose first request is still running), or lifts the bound again
   * (`undefined`). PostgreSQL: SET LOCAL lock_timeout. SQLite: nothing, since with one writer at a
   * time no other request holds a row meanwhile.
   */
  boundLockWaits(trx: Transaction<Database>, ms: number | undefined): Promise<void>;
  /** Whether an error is that bound running out (the row is still held). */
  isLockTimeout(error: unknown): boolean;
  /** Whether a page of one status is asked as an index range (see petQueries). */
  statusPageAsIndexRange: boolean;
}
