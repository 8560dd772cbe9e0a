import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUILD_VERSION } from '../../src/build-info.js';
import { DependencyUnavailableError } from '../../src/domain/errors.js';
import { createTestSchema } from '../helpers/postgres.js';
import { labelValues, sample, scrapeAt } from '../helpers/prometheus-text.js';
import { adminClient, deleteKeysWithPrefix, testRedisConfig } from '../helpers/redis.js';
import { serviceUrl } from '../helpers/services.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { call, startServer, TEST_BACKEND, useServer } from '../helpers/test-server.js';

/** Set by a test to make the database's readiness check fail, as an outage would. */
let databaseDown = false;
const server = useServer({
  wrapStorage: (storage) => ({
    ...storage,
    ping: () =>
      databaseDown ? Promise.reject(new DependencyUnavailableError('database')) : storage.ping(),
  }),
});
const scrape = () => scrapeAt(server().url);

async function createPets(key: string, count: number): Promise<void> {
  const answers = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      call(server(), 'POST', '/v1/pets', { key, body: { name: `Rex ${i}`, categoryId: 1 } }),
    ),
  );
  for (const answer of answers) expect(answer.status).toBe(201);
}

describe('metrics of the build and of readiness', () => {
  it('reports the version, commit and Node.js version of the build', async () => {
    const text = await scrape();
    const built = JSON.parse(readFileSync('dist/build-info.json', 'utf8')) as { commit: string };
    expect(built.commit).toMatch(/^[0-9a-f]{40}$/);
    const labels = { version: BUILD_VERSION, commit: built.commit, node_version: process.version };
    expect(sample(text, 'petstore_build_info', labels)).toBe(1);
  });

  it('says each dependency is up and the instance ready, then not while the database is down', async () => {
    const backend = TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';
    const database = { dependency: 'database', backend };
    let text = await scrape();
    expect(sample(text, 'petstore_dependency_up', database)).toBe(1);
    expect(sample(text, 'petstore_ready')).toBe(1);
    if (TEST_BACKEND === 'postgres') {
      expect(
        sample(text, 'petstore_dependency_up', { dependency: 'redis', backend: 'redis' }),
      ).toBe(1);
    }
    databaseDown = true;
    try {
      expect((await call(server(), 'GET', '/readyz')).status).toBe(503);
      text = await scrape();
      expect(sample(text, 'petstore_dependency_up', database)).toBe(0);
      expect(text).toMatch(/^petstore_ready 0$/m);
    } finally {
      databaseDown = false;
    }
    expect((await call(server(), 'GET', '/readyz')).status).toBe(200);
    text = await scrape();
    expect(sample(text, 'petstore_dependency_up', database)).toBe(1);
    expect(sample(text, 'petstore_ready')).toBe(1);
  });
});

describe.runIf(TEST_BACKEND === 'sqlite')('metrics of the SQLite commit groups', () => {
  it('counts commit groups, the writes in them and their duration; the queue is empty once answered', async () => {
    const { key } = await server().createKey('business');
    const before = await scrape();
    await createPets(key, 40);
    const after = await scrape();
    const delta = (name: string) => sample(after, name) - sample(before, name);
    const groups = delta('petstore_sqlite_commit_group_size_count');
    expect(groups).toBeGreaterThanOrEqual(1);
    expect(groups).toBeLessThanOrEqual(40 + 5);
    // Every create is one write of some group (the key's usage and last use may add a few).
    expect(delta('petstore_sqlite_commit_group_size_sum')).toBeGreaterThanOrEqual(40);
    expect(delta('petstore_sqlite_commit_duration_seconds_count')).toBe(groups);
    expect(after).toMatch(/^petstore_sqlite_commit_queue_depth 0$/m);
  });

  it('shows writes waiting in the queue while a burst is being committed', async () => {
    const { key } = await server().createKey('business');
    let deepest = 0;
    // A scrape sent with a burst is answered while some of its writes still wait; a few tries,
    // as a scrape may also be answered between two groups.
    for (let round = 0; round < 5 && deepest === 0; round++) {
      const [, text] = await Promise.all([createPets(key, 100), scrape()]);
      deepest = sample(text, 'petstore_sqlite_commit_queue_depth');
    }
    expect(deepest).toBeGreaterThan(0);
  });
});

describe.runIf(TEST_BACKEND === 'postgres')('metrics of PostgreSQL and Redis', () => {
  it('reports the pool, and each statement by a bounded name', async () => {
    const { key } = await server().createKey('business');
    const before = await scrape();
    await createPets(key, 5);
    expect((await call(server(), 'GET', '/v1/pets?limit=3', { key })).status).toBe(200);
    const after = await scrape();
    const timed = (statement: string, text: string) =>
      sample(text, 'petstore_pg_query_duration_seconds_count', { statement });
    expect(timed('pet_insert', after) - timed('pet_insert', before)).toBeGreaterThanOrEqual(1);
    expect(timed('pets_page', after)).toBeGreaterThanOrEqual(1);
    expect(timed('readiness_check', after)).toBeGreaterThanOrEqual(1);
    // Names, never SQL: a few dozen at most, whatever was sent.
    const statements = labelValues(after, 'petstore_pg_query_duration_seconds_count', 'statement');
    for (const name of statements) expect(name).toMatch(/^[a-z_]{2,40}$/);
    expect(statements.length).toBeLessThan(60);
    for (const state of ['in_use', 'idle', 'waiting']) {
      expect(after).toMatch(
        new RegExp(`^petstore_pg_pool_connections\\{state="${state}"\\} \\d+$`, 'm'),
      );
    }
    // The pool opened connections for that traffic and keeps them.
    expect(
      sample(after, 'petstore_pg_pool_connections', { state: 'idle' }) +
        sample(after, 'petstore_pg_pool_connections', { state: 'in_use' }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'petstore_pg_pool_connections', { state: 'waiting' })).toBe(0);
  });

  const redisCalls = (command: string, text: string) =>
    sample(text, 'petstore_redis_command_duration_seconds_count', { command });

  it('times Redis round trips by name', async () => {
    // Below 10,000 a minute a lease is one request: each request is one script in Redis.
    const { key } = await server().createKey('business');
    const before = await scrape();
    for (let i = 0; i < 3; i++) await call(server(), 'GET', '/v1/pets', { key });
    const after = await scrape();
    expect(redisCalls('lease', after) - redisCalls('lease', before)).toBeGreaterThanOrEqual(3);
    expect(redisCalls('ping', after)).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'petstore_redis_command_errors_total', { command: 'lease' })).toBe(0);
  });

  it('times only what reaches Redis, not the requests a lease serves here', async () => {
    const { key } = await server().createKey('enterprise', {
      perMinute: 1_000_000,
      perDay: 100_000_000,
    });
    const before = await scrape();
    for (let i = 0; i < 40; i++) await call(server(), 'GET', '/v1/pets', { key });
    const after = await scrape();
    const leases = redisCalls('lease', after) - redisCalls('lease', before);
    expect(leases).toBeGreaterThanOrEqual(1);
    expect(leases).toBeLessThan(20);
    expect(after).not.toMatch(/^petstore_redis_command_duration_seconds_count\{command="consume"/m);
  });

  it('counts Redis operations that fail, and says Redis is down', async () => {
    const proxy = await startTcpProxy({
      host: '127.0.0.1',
      port: Number(new URL(serviceUrl.redis).port),
    });
    const schema = await createTestSchema();
    const redis = testRedisConfig({ commandTimeoutMs: 300 });
    const proxied = await startServer({
      env: {
        DATABASE_URL: schema.url,
        REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
        REDIS_KEY_PREFIX: redis.keyPrefix,
        REDIS_COMMAND_TIMEOUT_MS: '300',
      },
    });
    try {
      const { key } = await proxied.createKey('business');
      expect((await call(proxied, 'GET', '/v1/pets', { key })).status).toBe(200);
      await proxy.cut();
      expect((await call(proxied, 'GET', '/v1/pets', { key })).status).toBe(503);
      expect((await call(proxied, 'GET', '/readyz')).status).toBe(503);
      const text = await scrapeAt(proxied.url);
      expect(
        sample(text, 'petstore_redis_command_errors_total', { command: 'lease' }),
      ).toBeGreaterThanOrEqual(1);
      expect(
        sample(text, 'petstore_redis_command_errors_total', { command: 'ping' }),
      ).toBeGreaterThanOrEqual(1);
      expect(
        sample(text, 'petstore_dependency_up', { dependency: 'redis', backend: 'redis' }),
      ).toBe(0);
      expect(
        sample(text, 'petstore_dependency_up', { dependency: 'database', backend: 'postgres' }),
      ).toBe(1);
      expect(text).toMatch(/^petstore_ready 0$/m);
    } finally {
      await proxied.close();
      await proxy.close();
      const client = adminClient();
      await deleteKeysWithPrefix(client, redis.keyPrefix).finally(() => client.disconnect());
      await schema.drop();
    }
  });
});
