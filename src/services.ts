import type { Config } from './config/config.js';
import { ApiKeyService } from './domain/api-keys/api-key-service.js';
import { type Clock, systemClock } from './domain/clock.js';
import { PetService } from './domain/pets/pet-service.js';
import type { Dependency, RateLimitStore, Storage } from './domain/ports.js';
import { RateLimiter } from './domain/rate-limits/rate-limiter.js';
import { MemoryRateLimitStore } from './storage/memory/memory-rate-limit-store.js';
import { createStorage } from './storage/create-storage.js';

/** Every store and service of one process, built from the configuration in one place. */
export interface Services {
  readonly config: Config;
  readonly clock: Clock;
  readonly storage: Storage;
  readonly rateLimits: RateLimitStore;
  readonly apiKeys: ApiKeyService;
  readonly pets: PetService;
  readonly limiter: RateLimiter;
  readonly dependencies: readonly Dependency[];
  /** Closes what was opened here (not what the caller passed in). */
  close(): Promise<void>;
}

export interface ServiceOptions {
  clock?: Clock;
  /** Apply pending migrations when opening the database (the server and most CLI commands). */
  migrate?: boolean;
  /** Use this storage instead of opening the configured one; the caller keeps closing it. */
  storage?: Storage;
  /** Use this rate-limit store instead of the configured one; the caller keeps closing it. */
  rateLimits?: RateLimitStore;
}

/**
 * The composition root: main.ts, the CLI and the tests all build their services here, so each
 * store and service is made once, from the configuration, and wired the same way everywhere.
 */
export async function createServices(
  config: Config,
  options: ServiceOptions = {},
): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const owned: Array<{ close(): Promise<void> }> = [];
  try {
    const storage =
      options.storage ?? (await createStorage(config.database, { migrate: options.migrate }));
    if (options.storage === undefined) owned.push(storage);
    const rateLimits = options.rateLimits ?? new MemoryRateLimitStore(clock);
    if (options.rateLimits === undefined) owned.push(rateLimits);

    const dependencies: Dependency[] = [
      { name: 'database', backend: storage.backend, ping: () => storage.ping() },
    ];
    if (rateLimits.backend === 'redis') {
      dependencies.push({ name: 'redis', backend: 'redis', ping: () => rateLimits.ping() });
    }
    return {
      config,
      clock,
      storage,
      rateLimits,
      apiKeys: new ApiKeyService(storage.apiKeys, clock, config.environment),
      pets: new PetService(storage.pets, storage.idempotency, clock),
      limiter: new RateLimiter(rateLimits, clock, {
        after: config.banAfter,
        durationMs: config.banSeconds * 1000,
      }),
      dependencies,
      close: () => closeAll(owned),
    };
  } catch (error) {
    await closeAll(owned);
    throw error;
  }
}

/** Closes in reverse order of opening; every one is closed even when one fails. */
async function closeAll(owned: Array<{ close(): Promise<void> }>): Promise<void> {
  let failure: unknown;
  for (const item of owned.reverse()) {
    try {
      await item.close();
    } catch (error) {
      failure ??= error;
    }
  }
  if (failure !== undefined) throw failure;
}
