import { createTestSchema } from './postgres.js';
import { adminClient, deleteKeysWithPrefix, testRedisConfig } from './redis.js';

/** The settings that point a server at the scale-out backends. */
export interface SharedBackendEnv {
  DATABASE_URL: string;
  REDIS_URL: string;
  REDIS_KEY_PREFIX: string;
}

/**
 * A schema of its own on the test PostgreSQL and a key prefix of its own on the test Redis, as
 * the settings a server reads; `cleanUp` deletes the keys and drops the schema.
 */
export async function ownSharedBackends(): Promise<{
  env: SharedBackendEnv;
  cleanUp(): Promise<void>;
}> {
  const schema = await createTestSchema();
  const redis = testRedisConfig();
  return {
    env: { DATABASE_URL: schema.url, REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.keyPrefix },
    async cleanUp() {
      const client = adminClient();
      try {
        await deleteKeysWithPrefix(client, redis.keyPrefix);
      } finally {
        client.disconnect();
      }
      await schema.drop();
    },
  };
}
