// @ts-check
/**
 * Applies groups of writes to SQLite in one transaction each (one fsync per group), in a worker
 * thread of its own so that the event loop never waits for the disk or for another connection's
 * write lock. Plain JavaScript: a worker thread runs a file as it is, and this one must run both
 * from the sources (tests) and from dist/. The same applyGroup serves databases a worker cannot
 * share (`:memory:`), on the main thread.
 */
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { bind } from '../sql/prepared-sql.js';
import {
  applySqliteSettings,
  BUSY_TIMEOUT_MS,
  readSqliteDurability,
  unwritableFile,
  WRITE_LOCK_SLICE_MS,
} from './sqlite-settings.js';

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
  return transactionsOf(db).group(writes, apply);
}

/**
 * @typedef {{
 *   group: (writes: Write[], apply: (write: Write) => Result) => Result[],
 *   one: (apply: (write: Write) => Result, write: Write) => Result,
 * }} GroupTransactions
 */

/** @type {WeakMap<BetterSqlite3.Database, GroupTransactions>} */
const transactions = new WeakMap();

/**
 * The group's transaction and each write's savepoint, made once per connection: better-sqlite3
 * builds four wrappers and defines their properties for every db.transaction() call, a cost
 * that showed in the service's CPU under creates when it was called for every write.
 * @param {BetterSqlite3.Database} db
 * @returns {GroupTransactions}
 */
function transactionsOf(db) {
  let made = transactions.get(db);
  if (made === undefined) {
    /** @type {GroupTransactions['one']} */
    const one = db.transaction(
      (/** @type {(write: Write) => Result} */ apply, /** @type {Write} */ write) => apply(write),
    );
    /** @type {GroupTransactions['group']} */
    const group = db.transaction(
      (/** @type {Write[]} */ writes, /** @type {(write: Write) => Result} */ apply) =>
        writes.map((write) => {
          try {
            return one(apply, write);
          } catch (error) {
            const failure = /** @type {{ message?: unknown, code?: unknown }} */ (error);
            return {
              ok: /** @type {const} */ (false),
              message: String(failure.message ?? error),
              code: typeof failure.code === 'string' ? failure.code : undefined,
            };
          }
        }),
    );
    made = { group, one };
    transactions.set(db, made);
  }
  return made;
}

/**
 * Throws SQLITE_READONLY, before SQLite touches them, when the database, its WAL or its WAL index
 * cannot be written (see unwritableFile).
 * @param {string} path
 */
function refuseUnwritableFiles(path) {
  const blocked = unwritableFile([path, `${path}-wal`, `${path}-shm`]);
  if (blocked === undefined) return;
  throw Object.assign(new Error(`${blocked.file} cannot be written (${blocked.code})`), {
    code: 'SQLITE_READONLY',
  });
}

/**
 * Takes the write lock (BEGIN IMMEDIATE), waiting for another process's at most BUSY_TIMEOUT_MS,
 * in short slices between which `cancelled` is asked: a shutdown past its deadline stops the wait
 * at once instead of after the whole busy timeout. Throws SQLITE_BUSY when the lock stays taken.
 * @param {BetterSqlite3.Database} db with busy_timeout = WRITE_LOCK_SLICE_MS
 * @param {() => boolean} cancelled
 */
export function takeWriteLock(db, cancelled) {
  if (!db.memory) refuseUnwritableFiles(db.name);
  const started = performance.now();
  for (;;) {
    try {
      db.exec('BEGIN IMMEDIATE');
      return;
    } catch (error) {
      const code = /** @type {{ code?: unknown }} */ (error).code;
      const busy = typeof code === 'string' && code.startsWith('SQLITE_BUSY');
      if (!busy || cancelled() || performance.now() - started >= BUSY_TIMEOUT_MS) throw error;
    }
  }
}

/**
 * Runs `work` in a transaction holding the write lock, and commits it; rolls back on any error.
 * @template T
 * @param {BetterSqlite3.Database} db
 * @param {() => boolean} cancelled
 * @param {() => T} work
 * @param {boolean} commit false to roll back even when `work` succeeds (a readiness probe)
 * @returns {T}
 */
export function inWriteTransaction(db, cancelled, work, commit = true) {
  takeWriteLock(db, cancelled);
  try {
    const result = work();
    db.exec(commit ? 'COMMIT' : 'ROLLBACK');
    return result;
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

/**
 * What readiness asks the writer to try (sqlite-writer.ts): without `write`, only whether the write
 * lock can be taken (no disk write); with it, a commit that writes a page and fsyncs (the header's
 * user_version, set to the value it has), for after a write failed: a full disk, a read-only file.
 * @param {BetterSqlite3.Database} db
 * @param {() => boolean} cancelled
 * @param {boolean} write
 */
export function probeWrites(db, cancelled, write) {
  inWriteTransaction(
    db,
    cancelled,
    () => {
      if (!write) return;
      const version = Number(db.pragma('user_version', { simple: true }));
      db.pragma(`user_version = ${version}`);
    },
    write,
  );
}

/**
 * @param {unknown} error
 * @returns {{ message: string, code: string | undefined }}
 */
function describe(error) {
  const failure = /** @type {{ message?: unknown, code?: unknown }} */ (error);
  return {
    message: String(failure.message ?? error),
    code: typeof failure.code === 'string' ? failure.code : undefined,
  };
}

/**
 * The worker: opens its own connection with the service's settings (the one function the main
 * connection uses too), says it is ready, then answers each group it is sent with its results (or
 * the error that stopped the whole group, with SQLite's code), each readiness probe, and each
 * question for its settings with what SQLite says they are on this connection. `cancel` (shared
 * memory) is set by a shutdown past its deadline: a wait for the write lock ends at once. Answers
 * go on the `answers` port, each counted in `answered` (shared memory) once it is posted, so that
 * the main thread can take them as soon as it is between two requests (WorkerCommitter).
 */
if (!isMainThread && parentPort !== null && workerData?.role === 'sqlite-commit') {
  const port = parentPort;
  const { path, plans, maxPetId, cancel, answers, answered } =
    /** @type {{ path: string, plans: Plans, maxPetId: number, cancel: SharedArrayBuffer, answers: import('node:worker_threads').MessagePort, answered: SharedArrayBuffer }} */ (
      workerData
    );
  const flag = new Int32Array(cancel);
  const count = new Int32Array(answered);
  /** An answer, then the count of answers: once the count shows it, the main thread can take it. */
  const reply = (/** @type {object} */ answer) => {
    answers.postMessage(answer);
    Atomics.add(count, 0, 1);
  };
  const cancelled = () => Atomics.load(flag, 0) !== 0;
  // The main connection created the file 0600; a file gone since (deleted, moved) must not come
  // back empty, with SQLite's default mode, under a worker that restarts.
  const db = new BetterSqlite3(path, { fileMustExist: true });
  applySqliteSettings(db, { inMemory: false });
  // Waits for the lock in slices (takeWriteLock), so a shutdown can end the wait.
  db.pragma(`busy_timeout = ${WRITE_LOCK_SLICE_MS}`);
  const prepare = statementCache(db);
  port.postMessage({ ready: true });
  port.on(
    'message',
    (
      /** @type {{ id: number, writes: Write[] } | { id: number, probe: { write: boolean } } | { id: number, query: 'durability' }} */ ask,
    ) => {
      try {
        if ('writes' in ask) {
          const results = inWriteTransaction(db, cancelled, () =>
            applyGroup(db, plans, prepare, ask.writes, maxPetId),
          );
          reply({ id: ask.id, results });
        } else if ('probe' in ask) {
          probeWrites(db, cancelled, ask.probe.write);
          reply({ id: ask.id, probed: true });
        } else {
          reply({ id: ask.id, durability: readSqliteDurability(db) });
        }
      } catch (error) {
        reply({ id: ask.id, error: describe(error) });
      }
    },
  );
  port.once('close', () => db.close());
}
