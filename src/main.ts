import { type Config, ConfigError, loadConfigFromProcess } from './config/config.js';
import { buildAdminApp } from './http/admin-app.js';
import { buildApp } from './http/build-app.js';
import { createLogger } from './http/log-options.js';
import { createServices } from './services.js';

const SHUTDOWN_GRACE_MS = 10_000;

function loadConfigOrExit(): Config {
  try {
    return loadConfigFromProcess();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`petstore: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** Pretty lines for a person at a terminal; JSON, one object a line, for everything else. */
async function logDestination(): Promise<{ stream?: NodeJS.WritableStream }> {
  if (!process.stdout.isTTY) return {};
  const { default: pretty } = await import('pino-pretty');
  return { stream: pretty({ colorize: true, sync: true }) };
}

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger({ level: config.logLevel, ...(await logDestination()) });
  const services = await createServices(config, { migrate: true, log: logger });
  const app = await buildApp({ services, logger });
  await services.startBackgroundWork();
  // The admin API, when ADMIN_PORT is set: its own listener, closed with the pet API's (onClose
  // runs inside app.close(), so before storage closes).
  const adminApp = config.admin ? await buildAdminApp({ services, logger }) : undefined;
  if (adminApp) app.addHook('onClose', () => adminApp.close());

  const first = await services.apiKeys.ensureFirstKey();
  if (first !== undefined) {
    // The key goes to the person starting the service, never into the structured log.
    app.log.warn({ keyId: first.record.id }, 'No API keys existed: created one free-plan key');
    process.stderr.write(
      `\nFirst API key (free plan), shown once, here only:\n\n  ${first.key}\n\n` +
        'More keys: npx --no petstore keys create --plan free\n\n',
    );
  }

  // Stop accepting, close idle and half-sent connections at once, finish in-flight requests
  // (src/http/http-server.ts), then close storage. Requests still running after the grace period
  // lose their connections and the exit status is 1.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'stopping: finishing in-flight requests');
    let forced = false;
    const force = setTimeout(() => {
      forced = true;
      app.log.error('in-flight requests did not finish in time; closing their connections');
      app.server.closeAllConnections();
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    try {
      await app.close();
      await services.close();
      app.log.info('stopped');
      process.exitCode = forced ? 1 : 0;
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exitCode = 1;
    } finally {
      clearTimeout(force);
    }
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));

  // Read back from the connection, so the log shows what a commit really waits for.
  const durability = await services.storage.durability();
  await app.listen({ port: config.port, host: config.host });
  app.log.info(
    { database: services.storage.backend, durability, environment: config.environment },
    `Pet Adoption Service listening; API at ${config.publicBaseUrl}/v1, docs at ${config.publicBaseUrl}/docs`,
  );
  if (adminApp && config.admin) {
    await adminApp.listen({ port: config.admin.port, host: config.admin.host });
    app.log.info({ admin: config.admin }, 'admin API listening under /admin/v1');
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `petstore: failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
