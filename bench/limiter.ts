/**
 * Micro-benchmark of the rate limiter, and the memory of the in-memory store after a million
 * distinct keys have come and gone. Run: npm run bench:limiter (node --expose-gc).
 */
import { performance } from 'node:perf_hooks';
import type { ApiKeyRecord } from '../src/domain/api-keys/api-key.js';
import { DAY_MS, ManualClock } from '../src/domain/clock.js';
import { RateLimiter } from '../src/domain/rate-limits/rate-limiter.js';
import { MemoryRateLimitStore } from '../src/storage/memory/memory-rate-limit-store.js';

const T0 = Date.parse('2026-11-23T00:00:00Z');
const BUSINESS = { perMinute: 1_000, perDay: 100_000 };
const bans = { after: 10, durationMs: 900_000 };

function key(id: string): ApiKeyRecord {
  return {
    id,
    label: '',
    plan: 'business',
    scopes: ['pets:read', 'pets:write'],
    hash: id,
    displayPrefix: id.slice(0, 12),
    createdAt: T0,
    deprecatedCalls: 0,
  };
}

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run with node --expose-gc');
  collect();
  collect();
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

async function timePerCall(label: string, calls: number, run: (i: number) => unknown) {
  for (let i = 0; i < 20_000; i++) await run(i); // warm up the JIT
  const started = performance.now();
  for (let i = 0; i < calls; i++) await run(i);
  const micros = ((performance.now() - started) * 1000) / calls;
  console.log(`${label.padEnd(58)} ${micros.toFixed(2)} µs/request`);
  return micros;
}

async function speed(): Promise<void> {
  const clock = new ManualClock(T0);
  const store = new MemoryRateLimitStore(clock);
  const limiter = new RateLimiter(store, clock, bans);
  const keys = Array.from({ length: 1_000 }, (_, i) => key(`key_${i}`));
  const calls = 1_000_000;
  console.log(`limiter cost, ${calls.toLocaleString('en')} calls each, memory store:`);
  await timePerCall('baseline: an empty async call', calls, async () => undefined);
  await timePerCall('hitKey (1,000 keys, allowed, both windows)', calls, (i) => {
    clock.set(T0 + Math.floor(i / 1_000) * 60); // ~1 request per key per minute of time
    return limiter.hitKey(keys[i % keys.length] as ApiKeyRecord, BUSINESS);
  });
  const hot = key('key_hot');
  await timePerCall('hitKey (one key over its limit: 429s and a ban)', calls, () =>
    limiter.hitKey(hot, { perMinute: 10, perDay: 1_000 }),
  );
  await timePerCall('peekAddress + hitAddress (no valid key, 65,536 IPs)', calls, async (i) => {
    const address = `10.1.${(i >> 8) & 255}.${i & 255}`;
    await limiter.peekAddress(address);
    return limiter.hitAddress(address);
  });
  await store.close();
}

async function memory(): Promise<void> {
  const clock = new ManualClock(T0 + 3_600_000);
  gc();
  const baseline = process.memoryUsage().heapUsed;
  const store = new MemoryRateLimitStore(clock);
  const limiter = new RateLimiter(store, clock, bans);
  const distinct = 1_000_000;
  for (let i = 0; i < distinct; i++) {
    if (i % 1_000 === 0) clock.advance(1); // a million keys over a few seconds
    await limiter.hitKey(key(`key_${i}`), BUSINESS);
  }
  gc();
  const live = process.memoryUsage().heapUsed;
  console.log(`\nmemory store, ${distinct.toLocaleString('en')} distinct keys:`);
  console.log(`  heap before: ${mib(baseline)}`);
  console.log(
    `  heap with every key live: ${mib(live)} (${store.size.toLocaleString('en')} entries, ~${Math.round((live - baseline) / distinct)} B each)`,
  );

  // Past midnight UTC every day window has ended; ordinary traffic sweeps the expired entries.
  clock.set(T0 + DAY_MS + 1_000);
  const sweepStarted = performance.now();
  let requests = 0;
  while (store.size > 1) {
    await limiter.hitKey(key('key_after_midnight'), BUSINESS);
    requests += 1;
  }
  const sweepMs = performance.now() - sweepStarted;
  gc();
  const after = process.memoryUsage().heapUsed;
  console.log(
    `  after expiry: ${store.size} entry left, swept by ${requests} requests in ${sweepMs.toFixed(0)} ms (≤ 2,000 entries each)`,
  );
  console.log(`  heap after expiry: ${mib(after)} (${mib(after - baseline)} above the start)`);
  await store.close();
}

await speed();
await memory();
