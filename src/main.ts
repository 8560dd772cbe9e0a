import type { FastifyInstance } from 'fastify';
import { type Config, ConfigError, loadConfigFromProcess } from './config/config.js';
import { ApiKeyService } from './domain/api-keys/api-key-service.js';
import { systemClock } from './domain/clock.js';
import type { Storage } from './domain/ports.js';
import { buildApp } from './http/build-app.js';
import { createStorage } from './storage/create-storage.js';

const SHUTDOWN_GRACE_MS = 10_000;

/** A newcomer's first start gets a working key at once; later starts never print one. */
async function ensureFirstKey(
  app: FastifyInstance,
  storage: Storage,
  config: Config,
): Promise<void> {
  const keys = new ApiKeyService(storage.apiKeys, systemClock, config.environment);
  if ((await keys.count()) > 0) return;
  const { record, key } = await keys.create({ plan: 'free', label: 'first start' });
  app.log.warn(
    { keyId: record.id, plan: record.plan },
    `No API keys existed, so one free-plan key was created. It is shown once, here: ${key}`,
  );
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfigFromProcess();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`petstore: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }

  const storage = await createStorage(config.database, { migrate: true });
  const app = await buildApp({ config, storage, log: { level: config.logLevel } });
  await ensureFirstKey(app, storage, config);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'stopping: finishing in-flight requests');
    const force = setTimeout(() => {
      app.log.error('in-flight requests did not finish in time; closing anyway');
      void storage.close().finally(() => process.exit(1));
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    try {
      await app.close();
      await storage.close();
      app.log.info('stopped');
      process.exitCode = 0;
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exitCode = 1;
    } finally {
      clearTimeout(force);
    }
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  app.log.info(
    { database: storage.backend, environment: config.environment },
    `Pet Adoption Service listening; API at ${config.publicBaseUrl}/v1, docs at ${config.publicBaseUrl}/docs`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `petstore: failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
