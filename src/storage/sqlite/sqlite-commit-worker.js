// @ts-check
/**
 * Applies groups of writes to SQLite in one transaction each (one fsync per group), in a worker
 * thread of its own so that the event loop never waits for the disk or for another connection's
 * write lock. Plain JavaScript: a worker thread runs a file as it is, and this one must run both
 * from the sources (tests) and from dist/. The same applyGroup serves databases a worker cannot
 * share (`:memory:`), on the main thread.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { bind } from '../sql/prepared-sql.js';
import { applySqliteSettings, readSqliteDurability } from './sqlite-settings.js';

/**
 * @typedef {{ sql: string, slots: ReadonlyArray<{ name: string } | { value: unknown }> }} Plan
 * @typedef {{ insert: Plan, takeKey: Plan, readKey: Plan, pointKeyAtPet: Plan }} Plans
 * @typedef {Record<string, unknown>} Params
 * @typedef {{ sql: string, parameters: readonly unknown[] }} Statement
 * @typedef {{ kind: 'create', row: Params }
 *   | { kind: 'idempotent', row: Params, take: Params, key: Params }
 *   | { kind: 'statements', statements: Statement[] }} Write
 * @typedef {{ ok: true, kind: 'created', id: bigint }
 *   | { ok: true, kind: 'key', fingerprint: string, petId: bigint | null }
 *   | { ok: true, kind: 'changes', changes: number[] }
 *   | { ok: false, message: string, code: string | undefined }} Result
 */

/**
 * Prepares each SQL text once per connection.
 * @param {BetterSqlite3.Database} db
 * @returns {(sql: string) => BetterSqlite3.Statement}
 */
export function statementCache(db) {
  /** @type {Map<string, BetterSqlite3.Statement>} */
  const prepared = new Map();
  return (sql) => {
    let statement = prepared.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      prepared.set(sql, statement);
    }
    return statement;
  };
}

/**
 * Runs the writes in one transaction, each in a savepoint of its own: one that fails is rolled
 * back alone and reported, the others commit. Throws only when the transaction itself fails
 * (the commit: a full disk, an I/O error), and then nothing of the group is stored.
 * @param {BetterSqlite3.Database} db
 * @param {Plans} plans
 * @param {(sql: string) => BetterSqlite3.Statement} prepare
 * @param {Write[]} writes
 * @param {number} maxPetId ids above it are refused (JavaScript clients read ids as doubles)
 * @returns {Result[]}
 */
export function applyGroup(db, plans, prepare, writes, maxPetId) {
  /**
   * @param {Plan} plan
   * @param {Params} params
   */
  const get = (plan, params) => prepare(plan.sql).get(...bind(plan, params));
  /** @param {Params} row */
  const insert = (row) => {
    const inserted = /** @type {{ id: bigint } | undefined} */ (get(plans.insert, row));
    if (inserted === undefined) throw new Error('INSERT ... RETURNING gave no row');
    if (inserted.id > BigInt(maxPetId)) throw new Error('pet ids are exhausted (2^53 - 1 reached)');
    return inserted.id;
  };
  /** @param {Write} write @returns {Result} */
  const apply = (write) => {
    if (write.kind === 'statements') {
      const changes = write.statements.map(
        ({ sql, parameters }) => prepare(sql).run(...parameters).changes,
      );
      return { ok: true, kind: 'changes', changes };
    }
    if (write.kind === 'create') return { ok: true, kind: 'created', id: insert(write.row) };
    if (get(plans.takeKey, write.take) === undefined) {
      const row = /** @type {{ fingerprint: string, pet_id: bigint | null } | undefined} */ (
        get(plans.readKey, write.key)
      );
      if (row === undefined) throw new Error('an Idempotency-Key neither taken nor found');
      return { ok: true, kind: 'key', fingerprint: row.fingerprint, petId: row.pet_id };
    }
    const id = insert(write.row);
    /** @type {Params} */
    const point = { ...write.key, petId: id };
    prepare(plans.pointKeyAtPet.sql).run(...bind(plans.pointKeyAtPet, point));
    return { ok: true, kind: 'created', id };
  };
  return db.transaction(() =>
    writes.map((write) => {
      try {
        return db.transaction(() => apply(write))();
      } catch (error) {
        const failure = /** @type {{ message?: unknown, code?: unknown }} */ (error);
        return {
          ok: /** @type {const} */ (false),
          message: String(failure.message ?? error),
          code: typeof failure.code === 'string' ? failure.code : undefined,
        };
      }
    }),
  )();
}

/**
 * The worker: opens its own connection with the service's settings (the one function the main
 * connection uses too), says it is ready, then answers each group it is sent with its results (or
 * the error that stopped the whole group), and each question for its settings with what SQLite
 * says they are on this connection.
 */
if (!isMainThread && parentPort !== null && workerData?.role === 'sqlite-commit') {
  const port = parentPort;
  const { path, plans, maxPetId } =
    /** @type {{ path: string, plans: Plans, maxPetId: number }} */ (workerData);
  // The main connection created the file 0600; a file gone since (deleted, moved) must not come
  // back empty, with SQLite's default mode, under a worker that restarts.
  const db = new BetterSqlite3(path, { fileMustExist: true });
  applySqliteSettings(db, { inMemory: false });
  const prepare = statementCache(db);
  port.postMessage({ ready: true });
  port.on(
    'message',
    (/** @type {{ id: number, writes: Write[] } | { id: number, query: 'durability' }} */ ask) => {
      try {
        port.postMessage(
          'writes' in ask
            ? { id: ask.id, results: applyGroup(db, plans, prepare, ask.writes, maxPetId) }
            : { id: ask.id, durability: readSqliteDurability(db) },
        );
      } catch (error) {
        port.postMessage({
          id: ask.id,
          error: String(/** @type {Error} */ (error).message ?? error),
        });
      }
    },
  );
  port.once('close', () => db.close());
}
