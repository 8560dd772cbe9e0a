import { Redis, type RedisOptions } from 'ioredis';
import type { RedisConfig } from '../../config/config.js';
import { DependencyUnavailableError } from '../../domain/errors.js';

export interface RedisConnectionOptions {
  /**
   * Told about connection trouble, at most once per outage (the first error after the connection
   * was ready, or the first ever): a Redis that stays down must not fill the log with one line per
   * reconnect attempt. Quiet when omitted; /readyz and the 503s show the outage anyway.
   */
  onError?: (error: Error) => void;
}

/** Reconnect attempts back off to this delay, so a returning Redis is found within ~2 s. */
const MAX_RECONNECT_DELAY_MS = 2_000;

/**
 * Error replies that mean Redis cannot serve now (starting, out of memory, a replica, busy with a
 * script, failing over, refusing our credentials), as opposed to a mistake in a command of ours.
 */
const UNAVAILABLE_REPLIES = [
  'LOADING',
  'BUSY',
  'OOM',
  'READONLY',
  'MASTERDOWN',
  'CLUSTERDOWN',
  'TRYAGAIN',
  'NOAUTH',
  'WRONGPASS',
];

/**
 * Opens a connection that never makes a request wait for Redis: each command is answered or fails
 * within `commandTimeoutMs`, and while disconnected it fails at once instead of waiting in a queue.
 * The connection reconnects by itself, so the caller recovers when Redis returns.
 */
export function openRedisConnection(
  config: RedisConfig,
  name: string,
  options: RedisConnectionOptions = {},
  overrides: Pick<RedisOptions, 'autoResubscribe'> = {},
): Redis {
  const client = new Redis(config.url, {
    connectionName: name,
    commandTimeout: config.commandTimeoutMs,
    // A written command with no byte back for this long means a dead socket (a failover, a
    // partition): drop it and reconnect instead of timing out every command until TCP notices.
    socketTimeout: Math.max(2 * config.commandTimeoutMs, 1_000),
    connectTimeout: Math.max(config.commandTimeoutMs, 2_000),
    keepAlive: 10_000,
    // While disconnected, fail at once: a queued command would hold the HTTP request until Redis
    // returns, and would then run late (a counter spent for a request long answered).
    enableOfflineQueue: false,
    // Commands in flight when the connection drops fail at once and are never sent again: a
    // consume whose answer was lost may already have counted, so resending it could count twice.
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    ...overrides,
  });
  let reported = false;
  client.on('ready', () => {
    reported = false;
  });
  // Without a listener ioredis prints every reconnect failure; with one it never throws.
  client.on('error', (error: Error) => {
    if (reported) return;
    reported = true;
    options.onError?.(error);
  });
  return client;
}

/**
 * Resolves once the first connection attempt has ended, ready or not, so a healthy Redis is ready
 * before the first request while one that is down does not stop the service from starting: it
 * answers 503 until Redis returns.
 */
export async function firstConnectionAttempt(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off('ready', done).off('error', done).off('end', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    client.once('ready', done).once('error', done).once('end', done);
  });
}

/**
 * What a failed command means to the service: Redis down, slow or gone mid-command becomes
 * DependencyUnavailableError (503); an error reply to a command of ours is a bug and stays as is.
 */
export function redisFailure(error: unknown): Error {
  if (error instanceof DependencyUnavailableError) return error;
  if (error instanceof Error && error.name === 'ReplyError') {
    const code = error.message.split(' ', 1)[0] ?? '';
    return UNAVAILABLE_REPLIES.includes(code)
      ? new DependencyUnavailableError('redis', { cause: error })
      : error;
  }
  // Timeouts, "Stream isn't writeable", MaxRetriesPerRequestError, connection closed, socket errors.
  return new DependencyUnavailableError('redis', { cause: error });
}

/** Runs one Redis call, turning an outage into DependencyUnavailableError. */
export async function callRedis<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw redisFailure(error);
  }
}

/**
 * Closes the connection and stops reconnecting. QUIT lets Redis answer what is in flight first;
 * when Redis is down or slow, the socket is dropped instead, so closing never waits on Redis.
 */
export async function closeRedisConnection(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'ready') {
    try {
      await client.quit();
    } catch {
      // Not answered within the command timeout: the disconnect below ends it anyway.
    }
  }
  client.disconnect();
}
