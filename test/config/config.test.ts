import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_TIMEOUTS, loadConfig } from '../../src/config/config.js';

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      database: { kind: 'sqlite', path: './data/petstore.db' },
      redis: undefined,
      environment: 'production',
      publicBaseUrl: 'http://127.0.0.1:8080',
      trustProxy: false,
      connections: { total: 4096, perAddress: 256, pipelinePenaltyMs: 10_000 },
      banAfter: 10,
      banSeconds: 900,
      corsOrigins: [],
      timeouts: {
        headersMs: 10_000,
        requestMs: 30_000,
        keepAliveMs: 72_000,
        shutdownGraceMs: 10_000,
      },
    });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.timeouts)).toBe(true);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://root@127.0.0.1:5432/test',
      REDIS_URL: 'redis://127.0.0.1:6379',
      PETSTORE_ENV: 'staging',
      PUBLIC_BASE_URL: 'https://api.example.com/v1/',
      TRUST_PROXY: '2',
      PETSTORE_BAN_AFTER: '3',
      PETSTORE_BAN_SECONDS: '60',
      CORS_ORIGINS: 'https://a.example.com, https://b.example.com',
      MAX_CONNECTIONS: '1000',
      MAX_CONNECTIONS_PER_ADDRESS: '1000',
      HEADERS_TIMEOUT_MS: '2000',
      REQUEST_TIMEOUT_MS: '5000',
      KEEP_ALIVE_TIMEOUT_MS: '7000',
      SHUTDOWN_GRACE_MS: '3000',
    });
    expect(config).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      database: {
        kind: 'postgres',
        url: 'postgres://root@127.0.0.1:5432/test',
        poolMax: 10,
        statementTimeoutMs: 5000,
        connectTimeoutMs: 3000,
      },
      redis: {
        url: 'redis://127.0.0.1:6379',
        keyPrefix: 'petstore:staging:',
        commandTimeoutMs: 1000,
      },
      environment: 'staging',
      publicBaseUrl: 'https://api.example.com',
      trustProxy: 2,
      banAfter: 3,
      banSeconds: 60,
      corsOrigins: ['https://a.example.com', 'https://b.example.com'],
      connections: { total: 1000, perAddress: 1000, pipelinePenaltyMs: 10_000 },
      timeouts: { headersMs: 2000, requestMs: 5000, keepAliveMs: 7000, shutdownGraceMs: 3000 },
    });
  });

  // The per-address cap counts the socket's address. 256 leaves a benchmark's 50-100 keep-alive
  // connections from 127.0.0.1 room, and needs 16 addresses to take all 4096 slots. Behind a proxy
  // every connection comes from the proxy, so the cap would throttle all clients together: there
  // set MAX_CONNECTIONS_PER_ADDRESS to MAX_CONNECTIONS, as in the test above.
  it('keys Redis by environment unless REDIS_KEY_PREFIX says otherwise', () => {
    const prefix = (env: Record<string, string>) =>
      loadConfig({ REDIS_URL: 'redis://x', ...env }).redis?.keyPrefix;
    expect(prefix({})).toBe('petstore:production:');
    expect(prefix({ PETSTORE_ENV: 'staging' })).toBe('petstore:staging:');
    expect(prefix({ PETSTORE_ENV: 'staging', REDIS_KEY_PREFIX: 'pets:' })).toBe('pets:');
  });

  it('caps connections per address below the total, by default and when only the total is set', () => {
    const { connections } = loadConfig({});
    expect(connections.perAddress).toBeGreaterThanOrEqual(100);
    expect(connections.total / connections.perAddress).toBeGreaterThanOrEqual(16);
    expect(loadConfig({ MAX_CONNECTIONS: '64' }).connections).toEqual({
      total: 64,
      perAddress: 64,
      pipelinePenaltyMs: 10_000,
      proxies: [],
    });
  });

  // The proxy's own connections must not fill its address's slots (issue 33: a burst through
  // HAProxy got its health checks refused): the addresses TRUST_PROXY lists skip the cap.
  it('leaves the proxies TRUST_PROXY lists by address out of the per-address cap', () => {
    expect(loadConfig({ TRUST_PROXY: '172.30.0.10, 10.0.0.0/8,::1' }).connections.proxies).toEqual([
      '172.30.0.10',
      '10.0.0.0/8',
      '::1',
    ]);
    expect(loadConfig({ TRUST_PROXY: 'true' }).connections.proxies).toEqual([]);
    expect(loadConfig({ TRUST_PROXY: '2' }).connections.proxies).toEqual([]);
    for (const bad of ['10.0.0.0/33', 'abc', '10.0.0.1/8/1', '::1/129']) {
      expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(ConfigError);
    }
  });

  it('reads sqlite:<path> as an SQLite file', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite:/tmp/x.db' }).database).toEqual({
      kind: 'sqlite',
      path: '/tmp/x.db',
    });
    expect(loadConfig({ DATABASE_URL: 'sqlite:./rel.db' }).database).toEqual({
      kind: 'sqlite',
      path: './rel.db',
    });
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT must be an integer 1-65535 (got "abc")'],
    [{ PORT: '0' }, 'PORT must be an integer 1-65535 (got "0")'],
    [{ PORT: '70000' }, 'PORT must be an integer 1-65535 (got "70000")'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must be a URL'],
    [{ DATABASE_URL: 'sqlite:' }, 'DATABASE_URL must be sqlite:<path> or postgres://...'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL must be a URL (redis: or rediss:)'],
    [{ PETSTORE_ENV: 'prod' }, 'PETSTORE_ENV must be one of production, staging (got "prod")'],
    [{ PUBLIC_BASE_URL: 'not a url' }, 'PUBLIC_BASE_URL must be a URL'],
    [{ PETSTORE_BAN_AFTER: '-1' }, 'PETSTORE_BAN_AFTER must be an integer'],
    [{ PETSTORE_BAN_SECONDS: '1.5' }, 'PETSTORE_BAN_SECONDS must be an integer'],
    [{ TRUST_PROXY: 'yes please' }, 'TRUST_PROXY must be'],
    [{ CORS_ORIGINS: 'https://a.example.com/path' }, 'CORS_ORIGINS must be'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of'],
    [
      { DATABASE_URL: 'postgres://x/y', DATABASE_POOL_MAX: '0' },
      'DATABASE_POOL_MAX must be an integer 1-1000 (got "0")',
    ],
    [{ MAX_CONNECTIONS: '0' }, 'MAX_CONNECTIONS must be an integer 1-1000000 (got "0")'],
    [
      { MAX_CONNECTIONS: '100', MAX_CONNECTIONS_PER_ADDRESS: '101' },
      'MAX_CONNECTIONS_PER_ADDRESS must be an integer 1-100 (got "101")',
    ],
    [
      { MAX_CONNECTIONS_PER_ADDRESS: 'all' },
      'MAX_CONNECTIONS_PER_ADDRESS must be an integer 1-4096 (got "all")',
    ],
    [
      { HEADERS_TIMEOUT_MS: '10s' },
      'HEADERS_TIMEOUT_MS must be an integer 100-3600000 (got "10s")',
    ],
    [{ REQUEST_TIMEOUT_MS: '50' }, 'REQUEST_TIMEOUT_MS must be an integer 100-3600000 (got "50")'],
    [
      { HEADERS_TIMEOUT_MS: '40000' },
      'REQUEST_TIMEOUT_MS must be at least HEADERS_TIMEOUT_MS (40000) (got "30000")',
    ],
    [{ KEEP_ALIVE_TIMEOUT_MS: '-1' }, 'KEEP_ALIVE_TIMEOUT_MS must be an integer'],
    [{ SHUTDOWN_GRACE_MS: '0' }, 'SHUTDOWN_GRACE_MS must be an integer 100-3600000 (got "0")'],
    [
      { REDIS_URL: 'redis://x', REDIS_KEY_PREFIX: 'a b' },
      'REDIS_KEY_PREFIX must be 1 to 64 letters',
    ],
  ])('refuses %j with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('the settings reference (docs/configuration.md)', () => {
  const reference = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

  it.each([
    ['HEADERS_TIMEOUT_MS', DEFAULT_TIMEOUTS.headersMs],
    ['REQUEST_TIMEOUT_MS', DEFAULT_TIMEOUTS.requestMs],
    ['KEEP_ALIVE_TIMEOUT_MS', DEFAULT_TIMEOUTS.keepAliveMs],
    ['SHUTDOWN_GRACE_MS', DEFAULT_TIMEOUTS.shutdownGraceMs],
  ])('list %s with the default the code uses, %d', (name, ms) => {
    expect(reference).toContain(`- \`${name}\` (\`${ms}\`): `);
  });
});
