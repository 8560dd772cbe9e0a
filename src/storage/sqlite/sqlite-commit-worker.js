// @ts-check
/**
 * Applies groups of pet writes to SQLite in one transaction each (one fsync per group), in a worker
 * thread of its own so that the event loop never waits for the disk. Plain JavaScript: a worker
 * thread runs a file as it is, and this one must run both from the sources (tests) and from dist/.
 * The same applyGroup serves databases a worker cannot share (`:memory:`), on the main thread.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';

/**
 * @typedef {{ sql: string, slots: Array<{ name: string } | { value: unknown }> }} Plan
 * @typedef {{ insert: Plan, takeKey: Plan, readKey: Plan, pointKeyAtPet: Plan }} Plans
 * @typedef {Record<string, unknown>} Params
 * @typedef {{ kind: 'create', row: Params }
 *   | { kind: 'idempotent', row: Params, take: Params, key: Params }} Write
 * @typedef {{ ok: true, kind: 'created', id: bigint }
 *   | { ok: true, kind: 'key', fingerprint: string, petId: bigint | null }
 *   | { ok: false, message: string, code: string | undefined }} Result
 * @typedef {{ [K in keyof Plans]: BetterSqlite3.Statement }} Statements
 */

/**
 * @param {Plan} plan
 * @param {Params} params
 */
function bind(plan, params) {
  return plan.slots.map((slot) => ('name' in slot ? params[slot.name] : slot.value));
}

/**
 * @param {BetterSqlite3.Database} db
 * @param {Plans} plans
 * @returns {Statements}
 */
export function prepareWrites(db, plans) {
  return {
    insert: db.prepare(plans.insert.sql),
    takeKey: db.prepare(plans.takeKey.sql),
    readKey: db.prepare(plans.readKey.sql),
    pointKeyAtPet: db.prepare(plans.pointKeyAtPet.sql),
  };
}

/**
 * Runs the writes in one transaction, each in a savepoint of its own: one that fails is rolled
 * back alone and reported, the others commit. Throws only when the transaction itself fails
 * (the commit: a full disk, an I/O error), and then nothing of the group is stored.
 * @param {BetterSqlite3.Database} db
 * @param {Plans} plans
 * @param {Statements} statements
 * @param {Write[]} writes
 * @param {number} maxPetId ids above it are refused (JavaScript clients read ids as doubles)
 * @returns {Result[]}
 */
export function applyGroup(db, plans, statements, writes, maxPetId) {
  /** @param {Params} row */
  const insert = (row) => {
    const inserted = /** @type {{ id: bigint } | undefined} */ (
      statements.insert.get(...bind(plans.insert, row))
    );
    if (inserted === undefined) throw new Error('INSERT ... RETURNING gave no row');
    if (inserted.id > BigInt(maxPetId)) throw new Error('pet ids are exhausted (2^53 - 1 reached)');
    return inserted.id;
  };
  /** @param {Write} write @returns {Result} */
  const apply = (write) => {
    if (write.kind === 'create') return { ok: true, kind: 'created', id: insert(write.row) };
    if (statements.takeKey.get(...bind(plans.takeKey, write.take)) === undefined) {
      const row = /** @type {{ fingerprint: string, pet_id: bigint | null } | undefined} */ (
        statements.readKey.get(...bind(plans.readKey, write.key))
      );
      if (row === undefined) throw new Error('an Idempotency-Key neither taken nor found');
      return { ok: true, kind: 'key', fingerprint: row.fingerprint, petId: row.pet_id };
    }
    const id = insert(write.row);
    statements.pointKeyAtPet.run(...bind(plans.pointKeyAtPet, { ...write.key, petId: id }));
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
 * The worker: opens its own connection with the service's durability settings, then answers each
 * group it is sent with its results, or with the error that stopped the whole group.
 */
if (!isMainThread && parentPort !== null && workerData?.role === 'sqlite-commit') {
  const port = parentPort;
  const { path, plans, maxPetId } =
    /** @type {{ path: string, plans: Plans, maxPetId: number }} */ (workerData);
  const db = new BetterSqlite3(path);
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.defaultSafeIntegers(true);
  const statements = prepareWrites(db, plans);
  port.on('message', (/** @type {{ id: number, writes: Write[] }} */ group) => {
    try {
      port.postMessage({
        id: group.id,
        results: applyGroup(db, plans, statements, group.writes, maxPetId),
      });
    } catch (error) {
      port.postMessage({
        id: group.id,
        error: String(/** @type {Error} */ (error).message ?? error),
      });
    }
  });
  port.once('close', () => db.close());
}
