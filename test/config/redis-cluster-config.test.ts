import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';

describe('loadConfig: REDIS_CLUSTER_NODES', () => {
  it('reads the seed nodes of a Redis Cluster, IPv6 in brackets, with the other Redis settings', () => {
    const config = loadConfig({
      REDIS_CLUSTER_NODES: ' 10.0.0.1:7000, redis-b.internal:7001,[fd00::3]:7002 ',
      REDIS_KEY_PREFIX: 'pets:',
      REDIS_COMMAND_TIMEOUT_MS: '500',
    });
    expect(config.redis).toEqual({
      url: '',
      clusterNodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: 'redis-b.internal', port: 7001 },
        { host: 'fd00::3', port: 7002 },
      ],
      keyPrefix: 'pets:',
      commandTimeoutMs: 500,
    });
    expect(Object.isFrozen(config.redis?.clusterNodes)).toBe(true);
  });

  it('has no cluster nodes with REDIS_URL alone', () => {
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).redis).not.toHaveProperty(
      'clusterNodes',
    );
  });

  it('refuses REDIS_URL and REDIS_CLUSTER_NODES together, naming both', () => {
    const both = { REDIS_URL: 'redis://127.0.0.1:6379', REDIS_CLUSTER_NODES: '127.0.0.1:7000' };
    expect(() => loadConfig(both)).toThrow(ConfigError);
    expect(() => loadConfig(both)).toThrow(
      /REDIS_URL and REDIS_CLUSTER_NODES are both set: set REDIS_URL for one Redis or REDIS_CLUSTER_NODES for a Redis Cluster, not both/,
    );
  });

  it.each(['127.0.0.1', '127.0.0.1:0', '127.0.0.1:70000', 'a:1,,b:2', 'redis://a:1', '::1:7000'])(
    'refuses REDIS_CLUSTER_NODES=%j with a message naming the variable',
    (nodes) => {
      expect(() => loadConfig({ REDIS_CLUSTER_NODES: nodes })).toThrow(
        `REDIS_CLUSTER_NODES must be host:port[,host:port...] (an IPv6 address in brackets) (got ${JSON.stringify(nodes)})`,
      );
    },
  );
});
