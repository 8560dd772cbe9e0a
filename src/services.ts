import { type Config, ConfigError } from './config/config.js';
import type { KeyEnvironment } from './domain/api-keys/api-key.js';
import { AdminAdmissionService } from './domain/admin-tokens/admin-admission.js';
import { AdminIdempotency } from './domain/admin-tokens/admin-idempotency.js';
import { AdminTokenService } from './domain/admin-tokens/admin-token-service.js';
import { AdmissionService } from './domain/admission/admission-service.js';
import { ApiKeyService } from './domain/api-keys/api-key-service.js';
import { type AuditLog, auditLogEntry } from './domain/api-keys/key-audit.js';
import { KeyManagementService } from './domain/api-keys/key-management-service.js';
import { KeyUsageCounter } from './domain/api-keys/key-usage-counter.js';
import { type Clock, MINUTE_MS, systemClock } from './domain/clock.js';
import { PetService } from './domain/pets/pet-service.js';
import { StoreCache } from './domain/cache/store-cache.js';
import type { CachedAnswer } from './http/answers/cached-answer.js';
import type {
  CloseOptions,
  Dependency,
  KeyChangeNotifier,
  RateLimitStore,
  Storage,
} from './domain/ports.js';
import { RateLimiter } from './domain/rate-limits/rate-limiter.js';
import { createStorage } from './storage/create-storage.js';
import type { Tracing } from './telemetry/tracing.js';
import { MemoryKeyChangeNotifier } from './storage/memory/memory-key-change-notifier.js';
import { MemoryRateLimitStore } from './storage/memory/memory-rate-limit-store.js';
import type { Metrics } from './telemetry/metrics.js';

/** What the services report about their own work: outages, background failures. */
export interface ServiceLog {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

/** Key audit records as `info` lines of the service log, "key audit", the entry under `audit`. */
export function loggedAuditLog(log: ServiceLog): AuditLog {
  return { recorded: (entry) => log.info({ audit: auditLogEntry(entry) }, 'key audit') };
}

/**
 * Every store and service of one process but its metrics: what a CLI command gets
 * (createStoreServices).
 */
export interface StoreServices {
  readonly config: Config;
  readonly clock: Clock;
  readonly storage: Storage;
  readonly rateLimits: RateLimitStore;
  readonly keyChanges: KeyChangeNotifier;
  readonly apiKeys: ApiKeyService;
  readonly pets: PetService;
  /** Every cache of stored data, invalidated together when the store generation changes. */
  readonly cache: StoreCache<CachedAnswer>;
  readonly limiter: RateLimiter;
  /** Who gets in (every request of the API) and the key operations that change it. */
  readonly admission: AdmissionService;
  /** Requests per key and day, counted in memory and flushed on an interval and at close. */
  readonly usage: KeyUsageCounter;
  /** Every operation on a key over its life (CLI and admin API), audited. */
  readonly keys: KeyManagementService;
  readonly dependencies: readonly Dependency[];
  /** The admin API's credentials, who gets in to it, and its idempotent creates and rolls. */
  readonly admin: {
    readonly tokens: AdminTokenService;
    readonly admission: AdminAdmissionService;
    readonly idempotency: AdminIdempotency;
  };
  /**
   * What a server does besides answering requests: dropping keys other instances changed from the
   * cache, and purging expired idempotency records. The CLI does not start it.
   */
  startBackgroundWork(): Promise<void>;
  /**
   * Stops the background work and closes what was opened here (not what the caller passed in);
   * `deadlineMs` bounds how long storage waits for writes still under way (Storage.close).
   */
  close(options?: CloseOptions): Promise<void>;
}

/** Every store and service of one process, built from the configuration in one place. */
export interface Services extends StoreServices {
  /** What /metrics reports: storage, Redis and every listener of the process feed it. */
  readonly metrics: Metrics;
}

export interface ServiceOptions {
  /**
   * Tests only: time as this clock says, also where the server otherwise follows a shared clock
   * (Redis's for windows and bans, the database's for a ban's lift). Without it, the system clock.
   */
  clock?: Clock;
  /** Apply pending migrations when opening the database (the server and most CLI commands). */
  migrate?: boolean;
  /** Open only a database that exists: a missing SQLite file is an error, not created. */
  mustExist?: boolean;
  /** Use this storage instead of opening the configured one; the caller keeps closing it. */
  storage?: Storage;
  /** Use this rate-limit store instead of the configured one; the caller keeps closing it. */
  rateLimits?: RateLimitStore;
  /**
   * Report into these metrics (a caller that opened `storage` itself gave it their `storage`
   * observer); by default a registry of the services' own.
   */
  metrics?: Metrics;
  log?: ServiceLog;
  /**
   * Where each committed key audit record is also written (a record outside the database that a
   * restore does not undo); by default an info line on `log`, named "key audit".
   */
  auditLog?: AuditLog;
  /** Spans around the calls of a request to storage and Redis (src/telemetry/tracing.ts). */
  tracing?: Pick<Tracing, 'traceCalls'>;
}

/** Cached answers per process: enough for the hot pages and pets, bounded whatever the data. */
const CACHE_BUDGET_BYTES = { pages: 24 * 1024 * 1024, pets: 8 * 1024 * 1024 } as const;

/** Idempotency records are purged this often, in batches, a bounded amount each time. */
const PURGE = { everyMs: MINUTE_MS, batch: 1_000, maxBatches: 10 } as const;
/** Ended bans are recorded (audit) this often; a ban's end shows in the trail within about it. */
const BAN_END_SWEEP_MS = 5_000;

/**
 * The composition root: server-main.ts, the CLI and the tests all build their services here, so each
 * store and service is made once, from the configuration, and wired the same way everywhere.
 */
export async function createServices(
  config: Config,
  options: ServiceOptions = {},
): Promise<Services> {
  const metrics = options.metrics ?? (await import('./telemetry/metrics.js')).createMetrics();
  return openServices(config, options, metrics);
}

/**
 * The services without metrics, for a CLI command: it reports none, and prom-client (with the
 * OpenTelemetry API it requires) is not loaded for it. Storage and Redis are observed by no one.
 */
export function createStoreServices(
  config: Config,
  options: Omit<ServiceOptions, 'metrics'> = {},
): Promise<StoreServices> {
  return openServices(config, options, undefined);
}

async function openServices<M extends Metrics | undefined>(
  config: Config,
  options: ServiceOptions,
  metrics: M,
): Promise<StoreServices & { readonly metrics: M }> {
  const clock = options.clock ?? systemClock;
  const log = options.log;
  const auditLog = options.auditLog ?? (log ? loggedAuditLog(log) : undefined);
  const owned: Array<{ close(): Promise<void> }> = [];
  const timers: NodeJS.Timeout[] = [];
  try {
    const storage =
      options.storage ??
      (await createStorage(config.database, {
        migrate: options.migrate,
        mustExist: options.mustExist,
        ...(metrics ? { observer: metrics.storage } : {}),
        // As for Redis below: a clock passed in (tests) owns time; a ban's lift is dated by the
        // database's clock, which every server shares whatever the host running the CLI says.
        time: options.clock ? 'caller' : 'database',
      }));
    if (options.storage === undefined) owned.push(storage);
    // One environment per database: a process that migrates (a server, the CLI's commands on keys
    // and data) records its own in a database that has none, and refuses another's. A storage
    // passed in (tests) is the caller's to check.
    if (options.storage === undefined && options.migrate === true) {
      await checkDatabaseEnvironment(storage, config.environment, { claim: true });
    }

    const onRedisError = (error: Error) =>
      log?.warn(
        { err: error },
        'Redis does not answer; rate-limited requests get 503 until it does',
      );
    // The Redis client is loaded only when REDIS_URL or REDIS_CLUSTER_NODES is set (some 20 MB of
    // memory otherwise).
    const redis = config.redis
      ? {
          config: config.redis,
          ...(await import('./storage/redis/redis-rate-limit-store.js')),
          ...(await import('./storage/redis/redis-key-change-notifier.js')),
        }
      : undefined;
    let rateLimits = options.rateLimits;
    if (rateLimits === undefined) {
      rateLimits = redis
        ? await redis.createRedisRateLimitStore(
            redis.config,
            { onError: onRedisError, ...(metrics ? { observer: metrics.redis } : {}) },
            // A clock passed in (tests) owns time; a server's windows follow Redis's clock.
            { time: options.clock ? 'caller' : 'redis' },
          )
        : new MemoryRateLimitStore(clock);
      owned.push(rateLimits);
    }
    const keyChanges: KeyChangeNotifier = redis
      ? await redis.createRedisKeyChangeNotifier(redis.config, {
          onError: onRedisError,
          ...(metrics ? { observer: metrics.redis } : {}),
        })
      : new MemoryKeyChangeNotifier();
    owned.push(keyChanges);

    const dependencies: Dependency[] = [
      { name: 'database', backend: storage.backend, ping: () => storage.ping() },
    ];
    if (rateLimits.backend === 'redis') {
      const store = rateLimits;
      dependencies.push({ name: 'redis', backend: 'redis', ping: () => store.ping() });
    }
    // Expiry and a rolled secret's grace end are read on the clock the windows and bans follow
    // (Redis's, shared by every instance), so a host whose clock is behind admits no expired key.
    const windowStore = rateLimits;
    const keyClock: Clock = {
      now: () => {
        const shared = windowStore.sharedTime;
        // Whole milliseconds: these times are stored (integer columns).
        return shared === undefined ? clock.now() : Math.floor(shared);
      },
    };
    const apiKeys = new ApiKeyService(
      storage.apiKeys,
      keyClock,
      config.environment,
      keyChanges,
      auditLog,
    );
    // Decorated here, so that storage/ and the Redis stores need know nothing of tracing.
    const tracing = options.tracing;
    const petStore = tracing
      ? tracing.traceCalls(
          storage.pets,
          {
            component: 'petstore.storage',
            system: storage.backend === 'postgres' ? 'postgresql' : 'sqlite',
          },
          ['create', 'createIdempotent', 'get', 'list'],
        )
      : storage.pets;
    const limits =
      tracing && rateLimits.backend === 'redis'
        ? tracing.traceCalls(rateLimits, { component: 'petstore.redis', system: 'redis' }, [
            'consume',
          ])
        : rateLimits;
    const pets = new PetService(petStore, storage.idempotency, clock);
    const limiter = new RateLimiter(limits, clock, {
      after: config.banAfter,
      durationMs: config.banSeconds * 1000,
    });
    // A changed key's leased quota and known ban are dropped at once (also in tests' servers,
    // which run no background work); while Redis is down the notifier subscribes when it returns.
    await keyChanges
      .subscribe((id) => void limiter.keyChanged(id).catch(() => undefined))
      .catch(() => undefined);
    const cache = new StoreCache<CachedAnswer>(storage.generation, {
      budgets: CACHE_BUDGET_BYTES,
      now: () => clock.now(),
      onInvalidated: ({ from, to, entries }) =>
        log?.info({ from, to, entries }, 'store generation changed; invalidated every cache'),
    });
    cache.onInvalidate(() => apiKeys.dropCachedKeys());
    cache.onKeysRead((read) => apiKeys.keysRead(read));

    const adminTokens = new AdminTokenService(storage.adminTokens, clock);
    const adminIdempotency = new AdminIdempotency(storage.adminIdempotency, clock);
    const usage = new KeyUsageCounter(storage.keyUsage, clock);
    const keys = new KeyManagementService(
      storage,
      apiKeys,
      limiter,
      keyClock,
      {
        usageRetentionDays: config.keyLife.usageRetentionDays,
      },
      auditLog,
    );
    const flushUsage = async () => {
      try {
        await usage.flush();
      } catch (error) {
        log?.warn({ err: error }, 'writing usage counts failed; keeping them for the next try');
      }
    };
    const keyUpkeep = async () => {
      try {
        await keys.recordEndedBans();
      } catch (error) {
        log?.warn({ err: error }, 'recording the end of bans failed; retrying later');
      }
    };

    const purge = async () => {
      try {
        const purged =
          (await pets.purgeExpiredIdempotency(PURGE.batch, PURGE.maxBatches)) +
          (await adminIdempotency.purgeExpired(PURGE.batch, PURGE.maxBatches));
        if (purged > 0) log?.info({ purged }, 'purged expired idempotency records');
      } catch (error) {
        log?.warn({ err: error }, 'purging expired idempotency records failed; retrying later');
      }
      try {
        const purged = await keys.purgeUsage();
        if (purged > 0) log?.info({ purged }, 'purged usage days past their retention');
      } catch (error) {
        log?.warn({ err: error }, 'purging old usage days failed; retrying later');
      }
    };

    return {
      config,
      clock,
      storage,
      rateLimits,
      keyChanges,
      apiKeys,
      pets,
      cache,
      limiter,
      admission: new AdmissionService(apiKeys, limiter, usage),
      usage,
      keys,
      dependencies,
      metrics,
      admin: {
        tokens: adminTokens,
        admission: new AdminAdmissionService(adminTokens, limiter),
        idempotency: adminIdempotency,
      },
      async startBackgroundWork() {
        // The once-a-second read that keeps the caches honest, from the start.
        void cache.start();
        await apiKeys.listenForChanges().catch((error: unknown) => {
          // The key cache lifetime still bounds how long a change takes to be seen.
          log?.warn({ err: error }, 'cannot listen for key changes; relying on the key cache');
        });
        // A random start, so that instances started together do not purge in step.
        const first = setTimeout(() => {
          void purge();
          timers.push(setInterval(() => void purge(), PURGE.everyMs).unref());
        }, Math.random() * PURGE.everyMs).unref();
        timers.push(first);
        timers.push(setInterval(() => void flushUsage(), config.keyLife.usageFlushMs).unref());
        timers.push(setInterval(() => void keyUpkeep(), BAN_END_SWEEP_MS).unref());
      },
      async close(closeOptions) {
        for (const timer of timers) clearTimeout(timer);
        cache.close();
        // Counts gathered since the last interval go to storage before it closes, both queued at
        // once and waited for only until the deadline: behind a write lock another process holds,
        // each would wait a whole busy timeout, and the deadline bounds the whole shutdown.
        // Storage.close answers what is still queued then; unwritten counts are lost with a warning.
        const deadline =
          closeOptions?.deadlineMs === undefined ? undefined : Date.now() + closeOptions.deadlineMs;
        const flushed = Promise.all([apiKeys.flushDeprecatedCalls(), flushUsage()]);
        if (deadline === undefined) await flushed;
        else await untilDeadline(flushed, deadline);
        await closeAll(
          owned,
          deadline === undefined
            ? closeOptions
            : { deadlineMs: Math.max(0, deadline - Date.now()) },
        );
      },
    };
  } catch (error) {
    await closeAll(owned);
    throw error;
  }
}

/**
 * Refuses (ConfigError) a database that records another PETSTORE_ENV than `environment`; with
 * `claim`, records `environment` first in a database that records none.
 */
export async function checkDatabaseEnvironment(
  storage: Storage,
  environment: KeyEnvironment,
  options: { claim: boolean },
): Promise<void> {
  const recorded = await storage.environment?.(options.claim ? environment : undefined);
  if (recorded !== undefined && recorded !== environment) {
    throw new ConfigError(environmentMismatch(recorded, environment));
  }
}

/** Names both environments and the two ways out, for the server's and the CLI's stderr. */
export function environmentMismatch(recorded: KeyEnvironment, running: KeyEnvironment): string {
  return (
    `this database belongs to PETSTORE_ENV=${recorded}, but this process runs with ` +
    `PETSTORE_ENV=${running} (unset means production): set PETSTORE_ENV=${recorded} to use it, ` +
    `or point DATABASE_URL at the ${running} database`
  );
}

/** Waits for `work` until `deadline` (epoch ms), whichever comes first. */
async function untilDeadline(work: Promise<unknown>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    work,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
    }),
  ]);
  clearTimeout(timer);
}

/** Closes in reverse order of opening; every one is closed even when one fails. */
async function closeAll(
  owned: Array<{ close(options?: CloseOptions): Promise<void> }>,
  options?: CloseOptions,
): Promise<void> {
  let failure: unknown;
  for (const item of owned.reverse()) {
    try {
      await item.close(options);
    } catch (error) {
      failure ??= error;
    }
  }
  if (failure !== undefined) throw failure;
}
