import {
  Kysely,
  type PostgresCursor,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
} from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../../config/config.js';
import { DependencyUnavailableError } from '../../domain/errors.js';
import { NO_STORAGE_OBSERVER, type PoolCounts, type StorageObserver } from '../observer.js';
import type { Database } from '../sql/database.js';
import { breaksConnection, toStorageError, WriteFailures } from './postgres-errors.js';
import { SearchPathPostgresDialect } from './postgres-introspector.js';
import { statementNames } from './postgres-statement-name.js';

export type PostgresConfig = Extract<DatabaseConfig, { kind: 'postgres' }>;

export interface PostgresConnection {
  db: Kysely<Database>;
  /** Writes the server refused for lack of resources, for readiness. */
  writeFailures: WriteFailures;
  /** The pool's connections now, for the observer (read when metrics are collected). */
  poolCounts(): PoolCounts;
}

/** Each statement timed under a bounded name; a pool's statements share one name cache. */
interface QueryTiming {
  observer: StorageObserver;
  nameOf(sql: string): string;
}

/** How the service shows up in pg_stat_activity; a URL's own application_name wins. */
const APPLICATION_NAME = 'pet-adoption-service';

/**
 * A transaction left idle this long cannot belong to a request any more (a whole request gets
 * 30 s): the server ends it, so a stalled process does not hold row or advisory locks forever.
 */
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 30_000;

/**
 * The server's statement_timeout normally answers first (57014, connection kept). The client-side
 * deadline, a little later, only fires when the server does not answer at all (a network that
 * drops packets without a reset), where waiting for TCP to give up would take minutes.
 */
const CLIENT_DEADLINE_MARGIN_MS = 1_000;

/**
 * Statements run as named prepared statements: the server parses and plans them once per
 * connection instead of on every call. Only fixed texts of the hot reads are registered (a name
 * per distinct text, process-wide), never arbitrary SQL, whose every variant would stay prepared on
 * every connection for its life.
 */
const preparedNames = new Map<string, string>();

export function prepareByName(sql: string): void {
  if (!preparedNames.has(sql)) preparedNames.set(sql, `petstore_${preparedNames.size + 1}`);
}

const COMMANDS = ['UPDATE', 'DELETE', 'INSERT', 'SELECT', 'MERGE'] as const;

/**
 * Kysely only reads the command to report affected rows for the four DML commands; any other
 * command (BEGIN, CREATE, ...) is reported as SELECT, which gets no count, as Kysely would do.
 */
function commandOf(command: string): PostgresQueryResult<unknown>['command'] {
  return COMMANDS.find((known) => known === command) ?? 'SELECT';
}

/** A pooled connection whose failures reach Kysely already mapped (see GuardedPool). */
class GuardedClient implements PostgresPoolClient {
  private released = false;
  /** Set once an outage broke this connection; Kysely may still send it a ROLLBACK. */
  private broken: unknown;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly writeFailures: WriteFailures,
    private readonly timing: QueryTiming,
  ) {}

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(
    sqlOrCursor: string | PostgresCursor<R>,
    parameters: ReadonlyArray<unknown> = [],
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof sqlOrCursor !== 'string') {
      throw new Error('cursors are not configured for this pool');
    }
    return this.run<R>(sqlOrCursor, parameters);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.client.release();
  }

  private async run<R>(
    sql: string,
    parameters: ReadonlyArray<unknown>,
  ): Promise<PostgresQueryResult<R>> {
    if (this.broken !== undefined) {
      // Answered without the server: the ROLLBACK of a transaction that lost its connection
      // must report the outage, not "client was closed", or it would hide the original error.
      throw new DependencyUnavailableError('database', { cause: this.broken });
    }
    const started = performance.now();
    try {
      const name = preparedNames.get(sql);
      const values = [...parameters];
      const result = await (name === undefined
        ? this.client.query(sql, values)
        : this.client.query({ name, text: sql, values }));
      this.timed(sql, started);
      return {
        command: commandOf(result.command),
        rowCount: result.rowCount ?? 0,
        // Rows are untyped at the driver; Kysely types them from the query it built.
        rows: result.rows as R[],
      };
    } catch (error) {
      this.timed(sql, started);
      this.writeFailures.note(error);
      if (breaksConnection(error) && !this.released) {
        // Hand the connection back as broken, so the pool closes it rather than give it to the
        // next query, which would fail too (pg only notices a closed socket a moment later).
        // Kysely's own release afterwards is then a no-op.
        this.broken = error;
        this.released = true;
        this.client.release(error instanceof Error ? error : true);
      }
      throw toStorageError(error);
    }
  }

  private timed(sql: string, started: number): void {
    this.timing.observer.queryDone(this.timing.nameOf(sql), (performance.now() - started) / 1000);
  }
}

/**
 * The pg pool as Kysely sees it. It is the one place where an unreachable or too slow server
 * becomes DependencyUnavailableError: every store method, migration and ping goes through
 * connect() and query(), so none of them needs a try/catch of its own.
 */
class GuardedPool implements PostgresPool {
  /** When each session of the pool connected, on the clock of writeFailures. */
  private readonly openedAt = new WeakMap<pg.PoolClient, number>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly writeFailures: WriteFailures,
    private readonly timing: QueryTiming,
  ) {
    pool.on('connect', (client) => this.openedAt.set(client, writeFailures.now()));
  }

  async connect(): Promise<PostgresPoolClient> {
    try {
      for (;;) {
        const client = await this.pool.connect();
        // Each pass closes a session opened before the last read-only answer: bounded.
        if (!this.writeFailures.mayBeReadOnly(this.openedAt.get(client) ?? Infinity)) {
          return new GuardedClient(client, this.writeFailures, this.timing);
        }
        client.release(true);
      }
    } catch (error) {
      throw toStorageError(error);
    }
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

/**
 * int8 parsed to bigint on this pool only: the global pg.types would change every other pg user in
 * the process, and its usual Number parser rounds a categoryId above 2^53.
 */
function int8AsBigInt(): pg.CustomTypesConfig {
  const types = new pg.TypeOverrides();
  types.setTypeParser(pg.types.builtins.INT8, (text: string) => BigInt(text));
  return types;
}

/**
 * A pool of at most `poolMax` connections, each opened with its timeouts in the startup packet, so
 * no statement can run on a connection that missed a SET. Nothing connects until the first query.
 */
export function openPostgres(
  config: PostgresConfig,
  observer: StorageObserver = NO_STORAGE_OBSERVER,
): PostgresConnection {
  const pool = new pg.Pool({
    connectionString: config.url,
    max: config.poolMax,
    // Bounds both opening a connection and waiting for a free one in a busy pool.
    connectionTimeoutMillis: config.connectTimeoutMs,
    statement_timeout: config.statementTimeoutMs,
    query_timeout: config.statementTimeoutMs + CLIENT_DEADLINE_MARGIN_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
    application_name: APPLICATION_NAME,
    keepAlive: true,
    types: int8AsBigInt(),
  });
  // A connection that dies while idle in the pool, or between two queries of a checked-out client,
  // emits 'error'; unheard, that would crash the process. The pool drops such a connection and the
  // next query opens a new one, so there is nothing else to do here.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const writeFailures = new WriteFailures();
  const timing = { observer, nameOf: statementNames() };
  return {
    db: new Kysely<Database>({
      dialect: new SearchPathPostgresDialect({
        pool: new GuardedPool(pool, writeFailures, timing),
      }),
    }),
    writeFailures,
    poolCounts: () => ({
      inUse: pool.totalCount - pool.idleCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
    }),
  };
}
