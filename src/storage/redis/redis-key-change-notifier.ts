import { Cluster } from 'ioredis';
import type { RedisConfig } from '../../config/config.js';
import type { KeyChangeNotifier } from '../../domain/ports.js';
import { NO_REDIS_OBSERVER, type RedisObserver } from '../observer.js';
import {
  callRedis,
  closeRedisConnection,
  firstConnectionAttempt,
  openRedisConnection,
  type RedisClient,
  type RedisConnectionOptions,
} from './redis-connection.js';

type Listener = (keyId: string) => void;

/**
 * Key changes told to every instance over Redis pub/sub, on the channel `<prefix>key-changes`.
 * On a Redis Cluster it is classic pub/sub, which the cluster bus carries to every node: the
 * subscriber listens on any one node (ioredis moves it to another when that node is lost).
 * Publishing uses one connection; listening its own, since a subscribed connection can send
 * nothing else. Pub/sub keeps no message: an instance that is disconnected when a change is
 * published misses it, which the key cache lifetime covers (the port is best effort).
 */
export class RedisKeyChangeNotifier implements KeyChangeNotifier {
  private readonly listeners = new Set<Listener>();

  constructor(
    private readonly publisher: RedisClient,
    private readonly subscriber: RedisClient,
    private readonly channel: string,
    private readonly onError: (error: Error) => void = () => {},
    private readonly observer: RedisObserver = NO_REDIS_OBSERVER,
  ) {
    subscriber.on('message', (from: string, keyId: string) => {
      if (from !== this.channel) return;
      for (const listener of [...this.listeners]) {
        try {
          listener(keyId);
        } catch (error) {
          // A listener's bug must neither starve the other listeners nor break the connection.
          this.onError(error instanceof Error ? error : new Error(String(error)));
        }
      }
    });
    // Every new connection starts unsubscribed: subscribe again on each one (also when the first
    // SUBSCRIBE failed because Redis was down, which ioredis's own resubscription would not redo).
    subscriber.on('ready', () => {
      if (this.listeners.size > 0) this.listen().catch((error: Error) => this.onError(error));
    });
  }

  async publish(keyId: string): Promise<void> {
    await callRedis(this.observer, 'publish', () =>
      publishingNode(this.publisher).publish(this.channel, keyId),
    );
  }

  /**
   * Rejects with DependencyUnavailableError when Redis does not answer; the listener stays
   * registered all the same and is called once the connection is back.
   */
  async subscribe(listener: Listener): Promise<void> {
    this.listeners.add(listener);
    await this.listen();
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await Promise.all([
      closeRedisConnection(this.publisher),
      closeRedisConnection(this.subscriber),
    ]);
  }

  private async listen(): Promise<void> {
    await callRedis(this.observer, 'subscribe', () => this.subscriber.subscribe(this.channel));
  }
}

/**
 * Where to PUBLISH: on a cluster any master carries a message to the subscribers of every node,
 * so pick one that is connected; ioredis would pick at random, a master that is down included.
 */
function publishingNode(client: RedisClient): RedisClient {
  if (!(client instanceof Cluster)) return client;
  return client.nodes('master').find((node) => node.status === 'ready') ?? client;
}

/** Opens both connections; like the rate-limit store, it starts even while Redis is down. */
export async function createRedisKeyChangeNotifier(
  config: RedisConfig,
  options: RedisConnectionOptions = {},
): Promise<RedisKeyChangeNotifier> {
  const publisher = openRedisConnection(config, 'petstore-key-changes-pub', options);
  const subscriber = openRedisConnection(config, 'petstore-key-changes-sub', options, {
    // Resubscribing is done above, on every connection; ioredis doing it too would repeat it.
    autoResubscribe: false,
  });
  const wait = Math.max(config.commandTimeoutMs, 2_000);
  await Promise.all([
    firstConnectionAttempt(publisher, wait),
    firstConnectionAttempt(subscriber, wait),
  ]);
  return new RedisKeyChangeNotifier(
    publisher,
    subscriber,
    `${config.keyPrefix}key-changes`,
    options.onError,
    options.observer,
  );
}
