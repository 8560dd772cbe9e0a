/**
 * Redis CPU per request with and without leases, on a redis-server of this run's own (so its CPU
 * is the bench's alone): 10,000 requests over 100 subjects whose limit is too small to lease (one
 * script run each), then 40,000 requests of one high-limit key (leased). Redis reports its own CPU
 * in INFO cpu. Run: npm run bench:leases. The correctness suite checks the script count instead
 * (test/storage/redis-rate-limit-leases.test.ts); a time is a measurement, not a test.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import type { LimitWindow } from '../src/domain/ports.js';
import { createRedisRateLimitStore } from '../src/storage/redis/redis-rate-limit-store.js';

const windows = (perMinute: number, perDay: number): LimitWindow[] => [
  { name: 'minute', limit: perMinute, lengthMs: 60_000 },
  { name: 'day', limit: perDay, lengthMs: 86_400_000 },
];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function redisCpuMs(client: Redis): Promise<number> {
  const info = await client.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1]);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1000;
}

async function main(): Promise<void> {
  const port = await freePort();
  const server = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  let client: Redis | undefined;
  try {
    // redis-server takes a moment to listen: try a fresh connection until one answers.
    for (let tries = 0; !client; tries++) {
      const attempt = new Redis(url, { lazyConnect: true, retryStrategy: () => null });
      attempt.on('error', () => undefined);
      try {
        await attempt.connect();
        client = attempt;
      } catch (error) {
        attempt.disconnect();
        if (tries > 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    const store = await createRedisRateLimitStore(
      { url, keyPrefix: `bench:${randomUUID()}:`, commandTimeoutMs: 1_000 },
      {},
      { time: 'redis' },
    );
    const connected = client;
    const hammer = async (on: (i: number) => string, limits: LimitWindow[], requests: number) => {
      const start = await redisCpuMs(connected);
      await Promise.all(
        Array.from({ length: 50 }, async () => {
          for (let i = 0; i < requests / 50; i++) {
            await store.consume({ subject: on(i), windows: limits, now: 0 });
          }
        }),
      );
      return (((await redisCpuMs(connected)) - start) * 1000) / requests;
    };
    const subjects = Array.from({ length: 100 }, () => `key:${randomUUID()}`);
    const hot = `key:${randomUUID()}`;
    const each = await hammer((i) => subjects[i % 100] as string, windows(150, 1_000), 10_000);
    const leased = await hammer(() => hot, windows(1_000_000_000, 1_000_000_000), 40_000);
    await store.close();
    console.log(`Redis CPU per request, one script each: ${each.toFixed(1)} µs`);
    console.log(`Redis CPU per request, leased:          ${leased.toFixed(2)} µs`);
  } finally {
    client?.disconnect();
    server.kill('SIGKILL');
  }
}

await main();
