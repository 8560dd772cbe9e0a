import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { BUILD_COMMIT, BUILD_VERSION } from '../build-info.js';
import { seriesCache, seriesCache2, seriesCache3 } from './series-cache.js';

/** Pool connections as the storage observer reports them (src/storage/observer.ts). */
interface PoolCounts {
  readonly inUse: number;
  readonly idle: number;
  readonly waiting: number;
}

/** Latencies of one round trip to a dependency: from a fraction of a millisecond to a timeout. */
const ROUND_TRIP_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];
/** MAX_GROUP (src/storage/sql/group-commit.ts) is 500. */
const GROUP_SIZE_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500];

/**
 * What the service reports at /metrics, with one registry per set of services (so that test
 * servers never share one). Every label takes a bounded set of values: operations and statements
 * by name, plans, dependencies, never a key, a path or an address.
 */
export interface Metrics {
  readonly registry: Registry;
  /**
   * Every answer of the public listener, told by the answer recorder (src/http/answers): by
   * operation (operationId, else the route's pattern, else `unmatched`), method and status, its
   * duration by operation, and a deprecated operation's calls by plan.
   */
  readonly http: {
    answered(answer: {
      operation: string;
      method: string;
      status: number;
      seconds: number;
      /** The plan of the key that called a deprecated operation; undefined otherwise. */
      deprecatedPlan: string | undefined;
    }): void;
  };
  /** By plan: `none` for a refusal of the address budget (no key). */
  readonly rateLimited: Counter<'code' | 'plan'>;
  readonly bans: Counter<'plan'>;
  readonly connectionsRefused: Counter<'cap'>;
  readonly dependencyUp: Gauge<'dependency' | 'backend'>;
  readonly ready: Gauge;
  /** For storage (src/storage/observer.ts), which does not import this library. */
  readonly storage: {
    queryDone(statement: string, seconds: number): void;
    watchPool(read: () => PoolCounts): void;
    commitDone(writes: number, seconds: number): void;
    watchCommitQueue(read: () => number): void;
  };
  /** Each round trip to Redis, told by the Redis stores (RedisObserver, src/storage/observer.ts). */
  readonly redis: { commandDone(command: string, seconds: number, failed: boolean): void };
}

const withProcessMetrics = new WeakSet<Registry>();

/** The process's own series, made once: they describe the process, whichever app shows them. */
let processSeries: Registry | undefined;

/**
 * The prom-client defaults (CPU, memory, event loop lag, heap), petstore_ prefixed. Only a server
 * collects them (the CLI builds services too), once per registry. They are made once per process
 * and registered with each app's registry: each collectDefaultMetrics call starts an event loop
 * monitor of its own that nothing stops, so a process building several apps (the tests) would
 * keep one running per app.
 */
export function collectProcessMetrics(metrics: Metrics): void {
  if (withProcessMetrics.has(metrics.registry)) return;
  withProcessMetrics.add(metrics.registry);
  if (processSeries === undefined) {
    processSeries = new Registry();
    collectDefaultMetrics({ register: processSeries, prefix: 'petstore_' });
  }
  for (const { name } of processSeries.getMetricsAsArray()) {
    const metric = processSeries.getSingleMetric(name);
    if (metric !== undefined) metrics.registry.registerMetric(metric);
  }
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const registers = [registry];
  new Gauge({
    name: 'petstore_build_info',
    help: 'Always 1: the version, commit and Node.js version this process runs',
    labelNames: ['version', 'commit', 'node_version'],
    registers,
  }).set({ version: BUILD_VERSION, commit: BUILD_COMMIT, node_version: process.version }, 1);

  let readPool: (() => PoolCounts) | undefined;
  new Gauge({
    name: 'petstore_pg_pool_connections',
    help: 'PostgreSQL pool connections by state (in_use, idle; waiting: queries waiting for one)',
    labelNames: ['state'],
    registers,
    collect() {
      const counts = readPool?.();
      if (counts === undefined) return;
      this.set({ state: 'in_use' }, counts.inUse);
      this.set({ state: 'idle' }, counts.idle);
      this.set({ state: 'waiting' }, counts.waiting);
    },
  });
  let readQueue: (() => number) | undefined;
  new Gauge({
    name: 'petstore_sqlite_commit_queue_depth',
    help: 'Writes submitted to the SQLite writer and not answered yet (the group committing included)',
    registers,
    collect() {
      if (readQueue !== undefined) this.set(readQueue());
    },
  });
  const queryDuration = new Histogram({
    name: 'petstore_pg_query_duration_seconds',
    help: 'PostgreSQL statements by name, answered or failed',
    labelNames: ['statement'],
    buckets: ROUND_TRIP_BUCKETS,
    registers,
  });
  const commitGroupSize = new Histogram({
    name: 'petstore_sqlite_commit_group_size',
    help: 'Writes per SQLite commit group (one transaction, one fsync)',
    buckets: GROUP_SIZE_BUCKETS,
    registers,
  });
  const commitDuration = new Histogram({
    name: 'petstore_sqlite_commit_duration_seconds',
    help: 'Time to commit one SQLite group, lock wait and fsync included',
    buckets: ROUND_TRIP_BUCKETS,
    registers,
  });
  const redisDuration = new Histogram({
    name: 'petstore_redis_command_duration_seconds',
    help: 'Redis operations (consume, peek, lift, ping, publish, ...), answered or failed',
    labelNames: ['command'],
    buckets: ROUND_TRIP_BUCKETS,
    registers,
  });
  const redisErrors = new Counter({
    name: 'petstore_redis_command_errors_total',
    help: 'Redis operations that failed (timeout, connection lost, refused)',
    labelNames: ['command'],
    registers,
  });
  const requests = new Counter({
    name: 'petstore_http_requests_total',
    help: 'HTTP requests answered, by operation (operationId, or route) and status',
    labelNames: ['operation', 'method', 'status'],
    registers,
  });
  const duration = new Histogram({
    name: 'petstore_http_request_duration_seconds',
    help: 'Time from request received to response sent, by operation',
    labelNames: ['operation'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers,
  });
  const deprecatedCalls = new Counter({
    name: 'petstore_deprecated_operation_calls_total',
    // By plan, never by key: a label taking one value per key grows without bound. Which keys
    // call it is counted with each key (`petstore keys list`).
    help: 'Calls to deprecated operations by plan; keys list shows them per key',
    labelNames: ['operation', 'plan'],
    registers,
  });
  const answered = seriesCache3((operation, method, status) =>
    requests.labels(operation, method, status),
  );
  const timed = seriesCache((operation) => duration.labels(operation));
  const deprecated = seriesCache2((operation, plan) => deprecatedCalls.labels(operation, plan));
  const queryTimer = seriesCache((statement) => queryDuration.labels(statement));
  const redisTimer = seriesCache((command) => redisDuration.labels(command));

  return {
    registry,
    http: {
      answered: ({ operation, method, status, seconds, deprecatedPlan }) => {
        answered(operation, method, String(status)).inc();
        timed(operation).observe(seconds);
        if (deprecatedPlan !== undefined) deprecated(operation, deprecatedPlan).inc();
      },
    },
    rateLimited: new Counter({
      name: 'petstore_rate_limited_total',
      help: 'Requests refused with 429, by error code (rate_limited, api_key_banned) and plan (none: no key)',
      labelNames: ['code', 'plan'],
      registers,
    }),
    bans: new Counter({
      name: 'petstore_api_key_bans_total',
      help: 'Temporary bans started for keys that kept sending requests after a 429, by plan',
      labelNames: ['plan'],
      registers,
    }),
    connectionsRefused: new Counter({
      name: 'petstore_connections_refused_total',
      help: 'Connections closed at once for being over a cap (total: MAX_CONNECTIONS, per_address: MAX_CONNECTIONS_PER_ADDRESS, pipelined: requests read ahead of their answers, penalized: a new connection from an address that pipelined too far ahead within PIPELINE_PENALTY_SECONDS)',
      labelNames: ['cap'],
      registers,
    }),
    dependencyUp: new Gauge({
      name: 'petstore_dependency_up',
      help: 'Whether the last readiness check reached the dependency (1) or not (0)',
      labelNames: ['dependency', 'backend'],
      registers,
    }),
    ready: new Gauge({
      name: 'petstore_ready',
      help: 'Whether /readyz answers ready (1) or 503 (0: draining, or a dependency down)',
      registers,
    }),
    storage: {
      queryDone: (statement, seconds) => queryTimer(statement).observe(seconds),
      watchPool: (read) => {
        readPool = read;
      },
      commitDone: (writes, seconds) => {
        commitGroupSize.observe(writes);
        commitDuration.observe(seconds);
      },
      watchCommitQueue: (read) => {
        readQueue = read;
      },
    },
    redis: {
      commandDone: (command, seconds, failed) => {
        redisTimer(command).observe(seconds);
        if (failed) redisErrors.inc({ command });
      },
    },
  };
}
