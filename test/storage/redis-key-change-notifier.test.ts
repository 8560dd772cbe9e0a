import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisConfig } from '../../src/config/config.js';
import { DependencyUnavailableError } from '../../src/domain/errors.js';
import {
  createRedisKeyChangeNotifier,
  type RedisKeyChangeNotifier,
} from '../../src/storage/redis/redis-key-change-notifier.js';
import { adminClient, eventually, PrivateRedis, testRedisConfig } from '../helpers/redis.js';
import { requireService } from '../helpers/services.js';
import { describeKeyChangeNotifierContract } from './key-change-notifier-contract.js';

const SUITE = 'RedisKeyChangeNotifier';

if (await requireService('redis', SUITE)) {
  const config = testRedisConfig();
  const opened: RedisKeyChangeNotifier[] = [];
  const open = async (overrides: Partial<RedisConfig> = {}) => {
    const notifier = await createRedisKeyChangeNotifier({ ...config, ...overrides });
    opened.push(notifier);
    return notifier;
  };
  afterAll(async () => {
    await Promise.all(opened.map((notifier) => notifier.close()));
  });

  describeKeyChangeNotifierContract('redis', async () => ({
    publisher: await open(),
    subscriber: await open(),
  }));

  describe(SUITE, () => {
    it('publishes on the channel <prefix>key-changes, apart from other deployments', async () => {
      const publisher = await open();
      const otherDeployment = await open({ keyPrefix: `test:${randomUUID()}:` });
      const elsewhere: string[] = [];
      await otherDeployment.subscribe((id) => elsewhere.push(id));
      const listener = adminClient();
      const heard: string[] = [];
      try {
        await listener.subscribe(`${config.keyPrefix}key-changes`);
        listener.on('message', (_channel: string, id: string) => heard.push(id));
        const id = randomUUID();
        await publisher.publish(id);
        await eventually('the channel carried the id', async () => heard.includes(id), 5_000, 10);
      } finally {
        listener.disconnect();
      }
      expect(elsewhere).toEqual([]);
    });

    describe('on a Redis of its own', () => {
      const timeout = 300;
      let redis: PrivateRedis;
      beforeAll(async () => {
        redis = await PrivateRedis.start();
      });
      afterAll(async () => {
        await redis?.kill();
      });
      const openPrivate = () => open({ url: redis.url, commandTimeoutMs: timeout });
      /** Publishes fresh ids until `heard` holds one: reconnecting takes a moment. */
      const reaches = async (publisher: RedisKeyChangeNotifier, heard: string[]) => {
        await eventually(
          'a publish reaches the subscriber',
          async () => {
            const id = randomUUID();
            await publisher.publish(id);
            await new Promise((r) => setTimeout(r, 20));
            return heard.includes(id);
          },
          10_000,
        );
      };

      it('quits both its connections on close', async () => {
        const connections = async () => {
          const admin = adminClient(redis.url);
          try {
            const list = String(await admin.call('CLIENT', 'LIST'));
            return list.split('\n').filter((line) => line.includes('name=petstore-key-changes-'));
          } finally {
            admin.disconnect();
          }
        };
        const before = (await connections()).length;
        const notifier = await openPrivate();
        await notifier.subscribe(() => {});
        expect(await connections()).toHaveLength(before + 2);
        await notifier.close();
        await eventually('both connections are gone', async () => {
          return (await connections()).length === before;
        });
      });

      it('rejects a publish with DependencyUnavailableError at once while Redis is down', async () => {
        const publisher = await openPrivate();
        await publisher.publish('k1');
        await redis.stop();
        try {
          const started = Date.now();
          const error = await publisher.publish('k2').catch((e: unknown) => e);
          expect(error).toBeInstanceOf(DependencyUnavailableError);
          expect(Date.now() - started).toBeLessThan(timeout + 1_000);
        } finally {
          await redis.start();
        }
        await eventually('publishing works again', async () => {
          await publisher.publish('k3');
          return true;
        });
      });

      it('keeps its subscription across a Redis restart', async () => {
        const publisher = await openPrivate();
        const subscriber = await openPrivate();
        const heard: string[] = [];
        await subscriber.subscribe((id) => heard.push(id));
        await reaches(publisher, heard);
        await redis.stop();
        await redis.start();
        await reaches(publisher, heard);
      });

      it('subscribes once Redis is back when it was down at subscribe time', async () => {
        const publisher = await openPrivate();
        const subscriber = await openPrivate();
        const heard: string[] = [];
        await redis.stop();
        try {
          await expect(subscriber.subscribe((id) => heard.push(id))).rejects.toBeInstanceOf(
            DependencyUnavailableError,
          );
        } finally {
          await redis.start();
        }
        await reaches(publisher, heard);
      });
    });
  });
}
