import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisConfig, RedisNode } from '../../config/config.js';
import { DependencyUnavailableError } from '../../domain/errors.js';
import type { RedisObserver } from '../observer.js';

/** One Redis (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES): the same commands on either. */
export type RedisClient = Redis | Cluster;

export interface RedisConnectionOptions {
  /**
   * Told about connection trouble, at most once per outage (the first error after the connection
   * was ready, or the first ever): a Redis that stays down must not fill the log with one line per
   * reconnect attempt. Quiet when omitted; /readyz and the 503s show the outage anyway.
   */
  onError?: (error: Error) => void;
  /** Told of each round trip the store built on the connection makes (NO_REDIS_OBSERVER). */
  observer?: RedisObserver;
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

/** The options shared by the one Redis and each connection to a cluster node. */
function connectionOptions(config: RedisConfig, name: string) {
  return {
    connectionName: name,
    commandTimeout: config.commandTimeoutMs,
    // A written command with no byte back for this long means a dead socket (a failover, a
    // partition): drop it and reconnect instead of timing out every command until TCP notices.
    socketTimeout: Math.max(2 * config.commandTimeoutMs, 1_000),
    connectTimeout: Math.max(config.commandTimeoutMs, 2_000),
    keepAlive: 10_000,
    // Commands in flight when the connection drops fail at once and are never sent again: a
    // consume whose answer was lost may already have counted, so resending it could count twice.
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
  } satisfies RedisOptions;
}

const reconnectDelay = (attempt: number) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS);

/**
 * Opens a connection that never makes a request wait for Redis: each command is answered or fails
 * within `commandTimeoutMs`, and while disconnected it fails at once instead of waiting in a queue.
 * The connection reconnects by itself, so the caller recovers when Redis returns. With
 * `clusterNodes` it is a cluster client: each key's command goes to the master holding its slot,
 * and a master that is down fails only the commands for its own slots.
 */
export function openRedisConnection(
  config: RedisConfig,
  name: string,
  options: RedisConnectionOptions = {},
  overrides: Pick<RedisOptions, 'autoResubscribe'> = {},
): RedisClient {
  const client =
    config.clusterNodes === undefined
      ? new Redis(config.url, {
          ...connectionOptions(config, name),
          // While disconnected, fail at once: a queued command would hold the HTTP request until
          // Redis returns, and would then run late (a counter spent for a request long answered).
          enableOfflineQueue: false,
          retryStrategy: reconnectDelay,
          ...overrides,
        })
      : // The cluster's subscriber connection resubscribes by itself, on whichever node it moves to.
        openCluster(config, config.clusterNodes, name);
  let reported = false;
  const report = (error: Error) => {
    if (reported) return;
    reported = true;
    options.onError?.(error);
  };
  client.on('ready', () => {
    reported = false;
  });
  // Without a listener ioredis prints every reconnect failure; with one it never throws.
  client.on('error', report);
  if (client instanceof Cluster) {
    // A master lost while the others serve is an outage too; its return ends it.
    client.on('node error', report);
    client.on('+node', (node: Redis) => {
      // ioredis connects to a node at its first command, and commands that arrive meanwhile would
      // fail (no queue): a burst at start would get 503s. Connect as soon as the node is known.
      if (node.status === 'wait') node.connect().catch(() => {});
      node.on('ready', () => {
        reported = false;
      });
    });
  }
  return client;
}

function openCluster(config: RedisConfig, nodes: readonly RedisNode[], name: string): Cluster {
  const cluster: Cluster = new Cluster(
    nodes.map(({ host, port }) => ({ host, port })),
    {
      redisOptions: connectionOptions(config, name),
      // Not ready yet (or every node lost): fail at once, as the one Redis does while disconnected.
      enableOfflineQueue: false,
      clusterRetryStrategy: reconnectDelay,
      // ioredis drops a lost node and waits for a MOVED by default, which a master that is down
      // and comes back on the same address never sends: keep reconnecting to it instead. Commands
      // for its slots fail at once meanwhile (its connection is not ready). Only while the cluster
      // is ready: before that (every seed down at start) a node must end, or ioredis waits for it
      // forever (it drops the nodes with disconnect(), which never ends one that is reconnecting)
      // and the client stays "connecting" even after the cluster is back.
      clusterNodeRetryStrategy: (attempt) =>
        cluster.status === 'ready' ? reconnectDelay(attempt) : null,
      // A command refused because its master is unreachable or the cluster is down is answered
      // 503 at once, never retried: one already sent may have counted. MOVED and ASK (a slot that
      // moved; nothing ran) are still followed, and TRYAGAIN after ioredis's short delay.
      retryDelayOnFailover: 0,
      retryDelayOnClusterDown: 0,
      slotsRefreshTimeout: Math.max(config.commandTimeoutMs, 1_000),
      // ioredis's ready check sends CLUSTER INFO to a random node as soon as the slots are known;
      // with no offline queue it fails at once when that node is still connecting (connected
      // eagerly above), and the client starts over: a CLI run's one PUBLISH then failed now and
      // then. Each master's own connection is what firstConnectionAttempt and pingRedis wait
      // for, and a master that is down fails only its own slots, as during an outage.
      enableReadyCheck: false,
    },
  );
  return cluster;
}

/**
 * Resolves once the first connection attempt has ended, ready or not, so a healthy Redis is ready
 * before the first request while one that is down does not stop the service from starting: it
 * answers 503 until Redis returns.
 */
export async function firstConnectionAttempt(
  client: RedisClient,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await attempt(client, timeoutMs);
  // A cluster is ready once it has the slot map; each master's connection is made after.
  if (client instanceof Cluster && client.status === 'ready') {
    const left = Math.max(0, deadline - Date.now());
    await Promise.all(client.nodes('master').map((node) => attempt(node, left)));
  }
}

async function attempt(client: RedisClient, timeoutMs: number): Promise<void> {
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

/**
 * Runs one round trip to Redis, told to the observer by `command` (how long, whether it failed),
 * turning an outage into DependencyUnavailableError.
 */
export async function callRedis<T>(
  observer: RedisObserver,
  command: string,
  call: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  let failed = true;
  try {
    const value = await call();
    failed = false;
    return value;
  } catch (error) {
    throw redisFailure(error);
  } finally {
    observer.commandDone(command, (performance.now() - started) / 1000, failed);
  }
}

/**
 * PING through the client: on a cluster, every master must answer, since a request whose key lives
 * on the one that does not gets 503. A master known to be disconnected fails at once.
 */
export async function pingRedis(client: RedisClient): Promise<void> {
  if (!(client instanceof Cluster)) {
    await client.ping();
    return;
  }
  if (client.status !== 'ready') throw new Error(`Redis Cluster client is ${client.status}`);
  const masters = client.nodes('master');
  if (masters.length === 0) throw new Error('no Redis Cluster master known');
  const down = masters.find((node) => node.status !== 'ready' && node.status !== 'wait');
  if (down !== undefined) {
    throw new Error(
      `Redis Cluster master ${down.options.host}:${down.options.port} is ${down.status}`,
    );
  }
  await Promise.all(masters.map((node) => node.ping()));
}

/**
 * Closes the connection and stops reconnecting. QUIT lets Redis answer what is in flight first;
 * when Redis is down or slow, the socket is dropped instead, so closing never waits on Redis.
 */
export async function closeRedisConnection(client: RedisClient): Promise<void> {
  if (client.status === 'end') return;
  // A cluster's QUIT goes to every node and would wait on one that is away.
  const answering =
    client instanceof Cluster ? client.nodes().every((node) => node.status === 'ready') : true;
  if (client.status === 'ready' && answering) {
    try {
      await client.quit();
    } catch {
      // Not answered within the command timeout: the disconnect below ends it anyway.
    }
  }
  client.disconnect();
}
