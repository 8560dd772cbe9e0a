import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { RedisConfig } from '../../src/config/config.js';
import { DependencyUnavailableError } from '../../src/domain/errors.js';
import type { LimitWindow } from '../../src/domain/ports.js';
import {
  createRedisKeyChangeNotifier,
  type RedisKeyChangeNotifier,
} from '../../src/storage/redis/redis-key-change-notifier.js';
import {
  createRedisRateLimitStore,
  type RedisRateLimitStore,
} from '../../src/storage/redis/redis-rate-limit-store.js';
import { eventually, keysWithPrefix } from '../helpers/redis.js';
import { RedisClusterForTest, requireRedisBinaries } from '../helpers/redis-cluster.js';
import { describeKeyChangeNotifierContract } from './key-change-notifier-contract.js';
import { describeRateLimitStoreContract } from './rate-limit-store-contract.js';
import { scaled } from '../helpers/machine.js';

/*
 * The Redis stores on a Redis Cluster of three masters this file starts: the same contracts as on
 * one Redis (every script touches the keys of one subject only, which the cluster refuses with
 * CROSSSLOT unless they share a slot), subjects spread over the masters, and a master stopped:
 * its subjects get DependencyUnavailableError at once, the others are served, and all recover
 * when it is back.
 */
const SUITE = 'Redis stores on a Redis Cluster';
const T0 = Date.parse('2026-11-23T12:00:00Z');
const windows = (perMinute: number, perDay: number): LimitWindow[] => [
  { name: 'minute', limit: perMinute, lengthMs: 60_000 },
  { name: 'day', limit: perDay, lengthMs: 86_400_000 },
];
// Far below a test's bound, yet above what a healthy node takes on a starved machine: at 300 ms,
// commands to the healthy masters timed out too at load 10 on 2 cores.
const TIMEOUT_MS = 1_000;

if (requireRedisBinaries(SUITE)) {
  // Top-level await: the contracts below are declared with the cluster's address.
  const cluster = await RedisClusterForTest.start();
  const config: RedisConfig = {
    url: '',
    clusterNodes: cluster.nodes,
    keyPrefix: `test:${randomUUID()}:`,
    commandTimeoutMs: TIMEOUT_MS,
  };
  const closing: Array<{ close(): Promise<void> }> = [];
  const openNotifier = async () => {
    const notifier = await createRedisKeyChangeNotifier(config);
    closing.push(notifier);
    return notifier;
  };
  afterAll(async () => {
    try {
      // Bounded, so that a close stuck on a broken client never leaves the servers running.
      await Promise.race([
        Promise.all(closing.map((c) => c.close())),
        new Promise((r) => setTimeout(r, 10_000)),
      ]);
    } finally {
      await cluster.kill();
    }
  });

  // The contract is about counting, not timeouts: with 300 ms, 1,200 concurrent leases on a busy
  // 2-core machine (CI runs two test files at once) timed out now and then.
  describeRateLimitStoreContract('redis cluster', () =>
    createRedisRateLimitStore({ ...config, commandTimeoutMs: 3_000 }),
  );
  // A channel of its own for each pair: the cluster bus may still be carrying an earlier test's
  // messages to the subscriber's node when the next test subscribes (seen on a busy machine). And,
  // as for the counting contract, a 3 s timeout: opening waits that long for the cluster's slots
  // (with 300 ms it waited 2 s, and a busy machine's client was not ready by then).
  describeKeyChangeNotifierContract('redis cluster', async () => {
    const own = { ...config, keyPrefix: `test:${randomUUID()}:`, commandTimeoutMs: 3_000 };
    return {
      publisher: await createRedisKeyChangeNotifier(own),
      subscriber: await createRedisKeyChangeNotifier(own),
    };
  });

  describe(SUITE, () => {
    /** How many keys under the prefix each master holds. */
    const keysPerMaster = async (prefix: string) =>
      Promise.all(
        cluster.nodes.map(async ({ port }) => {
          const admin = cluster.adminClient(port);
          try {
            return (await keysWithPrefix(admin, prefix)).length;
          } finally {
            admin.disconnect();
          }
        }),
      );

    it('keeps every key of one subject on one master, and spreads addresses over all three', async () => {
      const prefix = `test:${randomUUID()}:`;
      const spread = await createRedisRateLimitStore({ ...config, keyPrefix: prefix });
      closing.push(spread);
      const banned = `key:${randomUUID()}`;
      // A limit of 1 with a ban after 0 extra refusals: the window keys and the ban key all exist.
      for (let i = 0; i < 3; i++) {
        await spread.consume({
          subject: banned,
          windows: windows(1, 100),
          now: T0,
          ban: { after: 0, durationMs: 60_000 },
        });
      }
      const perMaster = await keysPerMaster(`${prefix}{${banned}}`);
      expect(perMaster.filter((n) => n > 0)).toHaveLength(1);
      expect(perMaster.reduce((a, b) => a + b, 0)).toBe(3);

      for (let i = 0; i < 60; i++) {
        await spread.consume({ subject: `addr:10.0.${i}.1`, windows: windows(30, 1_000), now: T0 });
      }
      const addresses = await keysPerMaster(`${prefix}{addr:`);
      expect(addresses.reduce((a, b) => a + b, 0)).toBe(120);
      for (const n of addresses) expect(n).toBeGreaterThan(5);
    });

    it('fails the subjects of a stopped master at once with DependencyUnavailableError, serves the others, and recovers when it is back', async () => {
      // A long command timeout, so "at once" cannot be met by timing out.
      const patient = await createRedisRateLimitStore({ ...config, commandTimeoutMs: 3_000 });
      closing.push(patient);
      const subjects = Array.from({ length: 30 }, () => `key:${randomUUID()}`);
      const owner = new Map<string, number>();
      for (const s of subjects) {
        owner.set(s, await cluster.portOf(`${config.keyPrefix}{${s}}:ban`));
      }
      const stopped = cluster.nodes[0]?.port as number;
      const onStopped = subjects.filter((s) => owner.get(s) === stopped);
      const elsewhere = subjects.filter((s) => owner.get(s) !== stopped);
      expect(onStopped.length).toBeGreaterThan(0);
      expect(elsewhere.length).toBeGreaterThan(0);
      const consume = (subject: string) =>
        patient.consume({ subject, windows: windows(100, 1_000), now: T0 });
      for (const s of subjects) await consume(s);

      await cluster.stopMaster(stopped);
      try {
        for (const s of onStopped) {
          const started = Date.now();
          await expect(consume(s)).rejects.toBeInstanceOf(DependencyUnavailableError);
          expect(Date.now() - started).toBeLessThan(scaled(1_000));
        }
        const pinged = Date.now();
        await expect(patient.ping()).rejects.toBeInstanceOf(DependencyUnavailableError);
        expect(Date.now() - pinged).toBeLessThan(scaled(1_000));
        for (const s of elsewhere) {
          await expect(consume(s)).resolves.toEqual({ kind: 'allowed', used: [2, 2] });
        }
      } finally {
        await cluster.startMaster(stopped);
      }
      await eventually('the stopped master serves again', async () => {
        await patient.ping();
        return true;
      });
      // Its keys were lost with it (no persistence): the windows start over, and count again.
      for (const s of onStopped) {
        await expect(consume(s)).resolves.toMatchObject({ kind: 'allowed' });
      }
    });

    it('fails the subjects of a frozen master after about the command timeout, never hanging, serves the others, and recovers when it thaws', async () => {
      const store = await createRedisRateLimitStore(config);
      closing.push(store);
      const subjects = Array.from({ length: 30 }, () => `key:${randomUUID()}`);
      const frozen = cluster.nodes[1]?.port as number;
      const owners = await Promise.all(
        subjects.map((s) => cluster.portOf(`${config.keyPrefix}{${s}}:ban`)),
      );
      const onFrozen = subjects.filter((_, i) => owners[i] === frozen);
      const elsewhere = subjects.filter((_, i) => owners[i] !== frozen);
      const consume = (subject: string) =>
        store.consume({ subject, windows: windows(100, 1_000), now: T0 });
      for (const s of subjects) await consume(s);

      cluster.pauseMaster(frozen);
      try {
        const started = Date.now();
        const failures = await Promise.all(
          onFrozen.map((s) => consume(s).catch((e: unknown) => e)),
        );
        for (const failure of failures) expect(failure).toBeInstanceOf(DependencyUnavailableError);
        expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + scaled(1_500));
        for (const s of elsewhere) {
          await expect(consume(s)).resolves.toEqual({ kind: 'allowed', used: [2, 2] });
        }
      } finally {
        await cluster.resumeMaster(frozen);
      }
      await eventually('the thawed master serves again', async () => {
        await store.ping();
        return true;
      });
      for (const s of onFrozen) {
        await expect(consume(s)).resolves.toMatchObject({ kind: 'allowed' });
      }
    });

    it('starts while the whole cluster is down, fails at once, and recovers when the masters return, key-change listeners included', async () => {
      const running = await createRedisRateLimitStore(config);
      closing.push(running);
      const who = `key:${randomUUID()}`;
      const consume = (store: RedisRateLimitStore) =>
        store.consume({ subject: who, windows: windows(100, 1_000), now: T0 });
      await consume(running);
      const ports = cluster.nodes.map(({ port }) => port);
      await Promise.all(ports.map((port) => cluster.stopMaster(port)));
      let late: RedisRateLimitStore | undefined;
      let lateSubscriber: RedisKeyChangeNotifier | undefined;
      const heard: string[] = [];
      try {
        const opening = Date.now();
        late = await createRedisRateLimitStore(config);
        closing.push(late);
        lateSubscriber = await openNotifier();
        expect(Date.now() - opening).toBeLessThan(scaled(10_000));
        await expect(lateSubscriber.subscribe((id) => heard.push(id))).rejects.toBeInstanceOf(
          DependencyUnavailableError,
        );
        for (const store of [running, late]) {
          const started = Date.now();
          await expect(consume(store)).rejects.toBeInstanceOf(DependencyUnavailableError);
          await expect(store.ping()).rejects.toBeInstanceOf(DependencyUnavailableError);
          expect(Date.now() - started).toBeLessThan(scaled(1_000));
        }
      } finally {
        for (const port of ports) await cluster.startMasterOnly(port);
        await cluster.waitUntilOk();
      }
      for (const store of [running, late]) {
        await eventually(
          'the store serves again',
          async () => (await consume(store as RedisRateLimitStore)).kind === 'allowed',
          15_000,
        );
      }
      const publisher = await openNotifier();
      await eventually(
        'a publish reaches the listener that subscribed while the cluster was down',
        async () => {
          const id = randomUUID();
          await publisher.publish(id);
          await new Promise((r) => setTimeout(r, 20));
          return heard.includes(id);
        },
        15_000,
      );
    });

    it('tells every instance of key changes while a master is down, also when it held the subscription', async () => {
      const publisher: RedisKeyChangeNotifier = await openNotifier();
      const subscriber = await openNotifier();
      const heard: string[] = [];
      await subscriber.subscribe((id) => heard.push(id));
      const reaches = () =>
        eventually(
          'a publish reaches the subscriber',
          async () => {
            const id = randomUUID();
            await publisher.publish(id);
            await new Promise((r) => setTimeout(r, 20));
            return heard.includes(id);
          },
          15_000,
        );
      await reaches();
      const listening = await cluster.portWithSubscriber();
      await cluster.stopMaster(listening);
      try {
        await reaches();
        // Every publish goes out through a master that is up, none fails on the one that is down.
        for (let i = 0; i < 20; i++) await publisher.publish(randomUUID());
      } finally {
        await cluster.startMaster(listening);
      }
      await reaches();
    });
  });
}
