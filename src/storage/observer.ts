/** Connections of a pool as the driver counts them. */
export interface PoolCounts {
  readonly inUse: number;
  readonly idle: number;
  /** Queries waiting for a connection to be free. */
  readonly waiting: number;
}

/**
 * What storage tells whoever watches it (the composition root wires it to the metrics), so that
 * storage needs no metrics library. The `watch` methods hand over a reader, called only when the
 * figures are collected: storage does no work for a figure nobody asks for.
 */
export interface StorageObserver {
  /** A PostgreSQL statement ended (answered or failed), by a bounded name (statement-name.ts). */
  queryDone(statement: string, seconds: number): void;
  watchPool(read: () => PoolCounts): void;
  /** An SQLite commit group ended: the writes it carried, and how long the commit took. */
  commitDone(writes: number, seconds: number): void;
  /** Writes submitted to the SQLite writer and not answered yet. */
  watchCommitQueue(read: () => number): void;
}

/**
 * Told of every round trip to Redis (a script, a ping, a publish), by a bounded name: what Redis
 * costs the service, not what the ports cost, which under leases are mostly local work.
 */
export interface RedisObserver {
  commandDone(command: string, seconds: number, failed: boolean): void;
}

export const NO_REDIS_OBSERVER: RedisObserver = { commandDone: () => undefined };

export const NO_STORAGE_OBSERVER: StorageObserver = {
  queryDone: () => undefined,
  watchPool: () => undefined,
  commitDone: () => undefined,
  watchCommitQueue: () => undefined,
};
