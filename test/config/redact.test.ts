import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { describeDatabase } from '../../src/cli/describe.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { redactUrl, urlSecrets } from '../../src/config/redact.js';
import { openRedisConnection } from '../../src/storage/redis/redis-connection.js';
import { createLogger, scrubKeys } from '../../src/telemetry/logging/logger.js';
import { testRedisConfig } from '../helpers/redis.js';
import { serviceUrl } from '../helpers/services.js';

const SECRET = 'Sup3r-Secret-pw';

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('the configuration loaded');
}

/** A logger writing into an array, as the server's does into standard output. */
function capturedLogger(secrets: readonly string[] = []) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'info', stream, secrets }) };
}

/** Issue 34 item 8: no password of DATABASE_URL or REDIS_URL in any output. */
describe('passwords of DATABASE_URL and REDIS_URL', () => {
  it.each([
    ['DATABASE_URL', `postgress://app:${SECRET}@db.internal/petstore`],
    ['DATABASE_URL', `postgres//app:${SECRET}@db.internal/petstore`],
    ['DATABASE_URL', `mysql://db.internal/petstore?password=${SECRET}`],
    ['REDIS_URL', `redis//:${SECRET}@cache.internal:6379`],
    ['REDIS_URL', `http://default:${SECRET}@cache.internal:6379`],
  ])('are not echoed when %s is mistyped (%s)', (name, value) => {
    const message = configError({ [name]: value });
    expect(message).toContain(name);
    expect(message).not.toContain(SECRET);
  });

  it('are not shown where a command names its database, in the user part or in the query', () => {
    for (const url of [
      `postgres://app:${SECRET}@db.internal/petstore`,
      `postgres://app@db.internal/petstore?sslmode=require&password=${SECRET}`,
    ]) {
      const shown = describeDatabase({
        kind: 'postgres',
        url,
        poolMax: 1,
        statementTimeoutMs: 1_000,
        connectTimeoutMs: 1_000,
      });
      expect(shown).not.toContain(SECRET);
      expect(shown).toContain('db.internal/petstore');
    }
  });

  it('are not logged when Redis refuses them (the AUTH command ioredis quotes)', async () => {
    const { lines, logger } = capturedLogger();
    const url = new URL(serviceUrl.redis);
    url.username = 'no-such-user';
    url.password = SECRET;
    const reported = new Promise<Error>((resolve) => {
      const client = openRedisConnection(testRedisConfig({ url: url.toString() }), 'redact-test', {
        onError: (error) => {
          client.disconnect();
          resolve(error);
        },
      });
    });
    logger.warn({ err: await reported }, 'Redis does not answer');
    logger.flush();
    const text = lines.join('');
    expect(text).toContain('Redis does not answer');
    expect(text).not.toContain(SECRET);
  });

  it('are masked in any log line, quoted by whatever library', () => {
    const env = { DATABASE_URL: `postgres://app:${encodeURIComponent('p@ss/word!')}@db/x` };
    const { lines, logger } = capturedLogger(urlSecrets(env));
    logger.error({ detail: 'password authentication failed: p@ss/word!' }, 'database refused');
    logger.flush();
    expect(lines.join('')).not.toContain('p@ss/word!');
  });

  it('masks the password of a URL that does not parse, keeping the rest', () => {
    expect(redactUrl(`postgres//app:${SECRET}@host/db`)).toBe('postgres//app:***@host/db');
    expect(redactUrl(`see redis://:${SECRET}@h:6379/0 now`)).toBe('see redis://:***@h:6379/0 now');
    expect(redactUrl(`redis://${SECRET}@h`)).toBe('redis://:***@h');
    expect(redactUrl('https://example.com/a?limit=1')).toBe('https://example.com/a?limit=1');
  });
});

describe('API keys in a logged path', () => {
  it('are masked behind two layers of percent-encoding', () => {
    const key = `pa_live_${'A1b2C3d4E5'.repeat(3)}abcdef`;
    const twice = encodeURIComponent(encodeURIComponent(key).replaceAll('_', '%5F'));
    expect(twice).toContain('%255F');
    expect(scrubKeys(`/v1/pets/${twice}`)).not.toContain('A1b2C3d4E5A1b2');
  });

  it('are masked in a message, alone or after the fields, and the arguments after it are kept', () => {
    const { lines, logger } = capturedLogger();
    const key = `pa_live_${'A1b2C3d4E5'.repeat(3)}abcdef`;
    logger.warn(`no route for /v1/${key}`);
    logger.info({ requestId: 'scrub-1' }, `no route for /v1/${key} (%s)`, 'GET');
    expect(lines.join('')).not.toContain('A1b2C3d4E5A1b2');
    const [alone, withFields] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(alone?.msg).toBe('no route for /v1/pa_live_[redacted]');
    expect(withFields).toMatchObject({
      requestId: 'scrub-1',
      msg: 'no route for /v1/pa_live_[redacted] (GET)',
    });
  });
});
