import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { call, useServer } from '../helpers/test-server.js';

// One backend only: the document's servers come from the settings alone.

/** One settings file holding both addresses, as operators may share it between environments. */
const BOTH = {
  PUBLIC_BASE_URL: 'https://serving.example.com',
  PRODUCTION_BASE_URL: 'https://pets.example.com/v1',
  STAGING_BASE_URL: 'https://staging.pets.example.com/',
};

async function servers(server: ReturnType<typeof useServer>): Promise<unknown> {
  const res = await call(server(), 'GET', '/v1/openapi.json');
  expect(res.status).toBe(200);
  return (res.body as { servers: unknown }).servers;
}

describe('OpenAPI servers', () => {
  const production = useServer({ env: { ...BOTH, PETSTORE_ENV: 'production' } });
  const staging = useServer({ env: { ...BOTH, PETSTORE_ENV: 'staging' } });
  const alone = useServer({ env: { PUBLIC_BASE_URL: 'https://pets.example.com' } });

  it('lists the serving production address first, then staging', async () => {
    expect(await servers(production)).toEqual([
      { url: 'https://serving.example.com/v1', description: 'production' },
      { url: 'https://staging.pets.example.com/v1', description: 'staging' },
    ]);
  });

  it('lists the serving staging address first, then production', async () => {
    expect(await servers(staging)).toEqual([
      { url: 'https://serving.example.com/v1', description: 'staging' },
      { url: 'https://pets.example.com/v1', description: 'production' },
    ]);
  });

  it('lists the serving address alone when the other is not configured', async () => {
    expect(await servers(alone)).toEqual([
      { url: 'https://pets.example.com/v1', description: 'production' },
    ]);
  });

  it('refuses a start whose other address is not an http(s) URL, naming the variable', () => {
    expect(() => loadConfig({ STAGING_BASE_URL: 'staging.example.com' })).toThrow(ConfigError);
    expect(() => loadConfig({ STAGING_BASE_URL: 'ftp://staging.example.com' })).toThrow(
      'STAGING_BASE_URL must be a URL (http: or https:) (got "ftp://staging.example.com")',
    );
    // Only the other environment's variable is read: production ignores its own.
    expect(loadConfig({ PRODUCTION_BASE_URL: 'not a url' }).otherEnvironment).toBeUndefined();
  });
});
