import { flushCompileCache } from 'node:module';
import { type Config, ConfigError, loadConfigFromProcess } from './config/config.js';
import { processUrlSecrets, redactSecrets } from './config/redact.js';
import { buildApp } from './http/apps/public/public-app.js';
import type { FastifyBaseLogger } from 'fastify';
import type { DestinationStream } from 'pino';
import { ApiServer } from './http/server/api-server.js';
import { createLogger } from './telemetry/logging/logger.js';
import { createServices, type Services } from './services.js';
import { BUILD_COMMIT, BUILD_VERSION } from './build-info.js';
import { startTracing } from './telemetry/tracing.js';
import { describeStartFailure } from './start-failure.js';

function loadConfigOrExit(): Config {
  try {
    return loadConfigFromProcess();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`petstore: ${redactSecrets(error.message, processUrlSecrets())}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/**
 * Pretty lines for a person at a terminal; JSON, one object a line, for everything else, through
 * pino's buffered destination (createLogger's default).
 */
async function logDestination(): Promise<{ stream?: DestinationStream }> {
  if (!process.stdout.isTTY) return {};
  const { default: pretty } = await import('pino-pretty');
  return { stream: pretty({ colorize: true, sync: true }) };
}

const MAKE_A_KEY = 'npm run petstore -- keys create --plan free';

/**
 * With no API key at all, the first start on SQLite at a terminal makes one and shows it there,
 * once: the person starting the service sees it and nothing records it. Anywhere else (output
 * piped to a file, journald or a container runtime; PostgreSQL, where several instances share the
 * keys) a secret printed would be kept in a log, so the instance only says how to make a key.
 * PETSTORE_BOOTSTRAP_KEY=off makes no key anywhere.
 */
async function bootstrapKey(config: Config, services: Services, log: FastifyBaseLogger) {
  if (config.operations.bootstrapKey === 'off') return;
  const interactive = config.database.kind === 'sqlite' && process.stderr.isTTY === true;
  if (!interactive) {
    if ((await services.apiKeys.count()) === 0) {
      log.warn(`No API keys exist; make one with: ${MAKE_A_KEY}`);
    }
    return;
  }
  const first = await services.apiKeys.ensureFirstKey();
  if (first === undefined) return;
  // The key goes to the person at the terminal, never into the structured log.
  log.warn({ keyId: first.record.id }, 'No API keys existed: created one free-plan key');
  process.stderr.write(
    `\nFirst API key (free plan), shown once, here only:\n\n  ${first.key}\n\nMore keys: ${MAKE_A_KEY}\n\n`,
  );
}

/** The settings of this start, once read: the failure report's hints name what they point to. */
let loaded: Config | undefined;

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  loaded = config;
  const logger = createLogger({
    level: config.logLevel,
    secrets: processUrlSecrets(),
    ...(await logDestination()),
  });
  logger.info(
    {
      version: BUILD_VERSION,
      commit: BUILD_COMMIT,
      node: process.version,
      tracing: config.tracing ?? 'off',
    },
    'Pet Adoption Service starting',
  );
  const tracing = await startTracing(config.tracing, {
    version: BUILD_VERSION,
    commit: BUILD_COMMIT,
  });
  const services = await createServices(config, {
    migrate: true,
    log: logger,
    ...(tracing ? { tracing } : {}),
  });
  const app = await buildApp({ services, logger, ...(tracing ? { tracing } : {}) });
  await services.startBackgroundWork();
  // The admin API, when ADMIN_PORT is set: its own listener, closed with the pet API's (onClose
  // runs inside app.close(), so before storage closes).
  // Each of these listeners' modules is loaded only when it is configured, before "listening".
  const adminApp = config.admin
    ? await import('./http/apps/admin/admin-app.js').then((m) =>
        m.buildAdminApp({ services, logger }),
      )
    : undefined;
  if (adminApp) app.addHook('onClose', () => adminApp.close());
  // The operations endpoints, when OPS_PORT is set: its /readyz follows the public listener's drain.
  const opsApp = config.ops
    ? await import('./http/apps/ops/ops-app.js').then((m) =>
        m.buildOpsApp({
          services,
          logger,
          draining: () => app.server instanceof ApiServer && app.server.draining,
        }),
      )
    : undefined;
  if (opsApp) app.addHook('onClose', () => opsApp.close());

  await bootstrapKey(config, services, app.log);

  // SIGTERM or SIGINT: /readyz answers 503 at once while everything is still served, each response
  // with Connection: close, for DRAIN_SECONDS, so a load balancer takes the instance out before it
  // stops accepting (src/http/server/api-server.ts). A second signal during the drain cuts it short (an
  // operator's second Ctrl-C); one after it closes the connections still open. Then: stop
  // accepting, close idle and half-sent connections at once, finish in-flight requests, close
  // storage. Requests still running after SHUTDOWN_GRACE_MS lose their connections, exit status 1.
  let signals = 0;
  let endDrain: () => void = () => {};
  let forceClose: () => void = () => {};
  let forced = false;
  const stop = async (signal: string) => {
    signals += 1;
    if (signals > 1) {
      app.log.warn({ signal }, 'stopping: signal received again');
      endDrain();
      forceClose();
      return;
    }
    const server = app.server;
    if (server instanceof ApiServer && config.operations.drainSeconds > 0) {
      server.drain();
      app.log.info(
        { signal, drainSeconds: config.operations.drainSeconds },
        'draining: /readyz answers 503, requests still served with Connection: close',
      );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, config.operations.drainSeconds * 1_000);
        endDrain = () => {
          clearTimeout(timer);
          endDrain = () => {};
          resolve();
        };
      });
    }
    app.log.info({ signal }, 'stopping: finishing in-flight requests');
    const stoppedBy = Date.now() + config.timeouts.shutdownGraceMs;
    forceClose = () => {
      forced = true;
      app.log.error('in-flight requests did not finish in time; closing their connections');
      app.server.closeAllConnections();
    };
    const force = setTimeout(forceClose, config.timeouts.shutdownGraceMs);
    force.unref();
    try {
      await app.close();
      // Writes still waiting for a lock or a stalled disk are answered 503 by the end of the grace
      // period rather than waited for (Storage.close).
      await services.close({ deadlineMs: Math.max(0, stoppedBy - Date.now()) });
      // The spans of the last requests, still buffered, go out before the process ends, within
      // what is left of the grace period (a collector that does not answer cannot hold it).
      if (tracing) {
        await Promise.race([
          tracing.shutdown().catch((error: unknown) => {
            app.log.warn({ err: error }, 'sending the last spans failed');
          }),
          new Promise((resolve) =>
            setTimeout(resolve, Math.max(0, stoppedBy - Date.now())).unref(),
          ),
        ]);
      }
      app.log.info('stopped');
      process.exitCode = forced ? 1 : 0;
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exitCode = 1;
    } finally {
      clearTimeout(force);
    }
    // Not waiting for the event loop to empty: a SQLite connection left open because closing it
    // would crash (sqlite-storage.ts, close) must not be closed by the native cleanup an ordinary
    // exit runs. Everything was closed or sent above; log lines are written synchronously.
    process.exit();
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  // Read back from the connection, so the log shows what a commit really waits for.
  const durability = await services.storage.durability();
  await app.listen({ port: config.port, host: config.host });
  // Node writes the compile cache (src/main.ts) when the process exits, and not at all when it is
  // killed: instances started while this one runs, or after it was killed, would compile every
  // module again. Every module of the start is loaded by now (the admin and ops apps are built).
  flushCompileCache();
  const docs = config.docs ? `, docs at ${config.publicBaseUrl}/docs` : '';
  app.log.info(
    { database: services.storage.backend, durability, environment: config.environment },
    `Pet Adoption Service listening; API at ${config.publicBaseUrl}/v1${docs}`,
  );
  if (adminApp && config.admin) {
    await adminApp.listen({ port: config.admin.port, host: config.admin.host });
    app.log.info({ admin: config.admin }, 'admin API listening under /admin/v1');
  }
  if (opsApp && config.ops) {
    await opsApp.listen({ port: config.ops.port, host: config.ops.host });
    app.log.info({ ops: config.ops }, 'operations listener: /metrics, /healthz, /readyz, /version');
  }
}

main().catch((error: unknown) => {
  process.stderr.write(describeStartFailure(error, loaded));
  process.exit(1);
});
