/**
 * CPU of the servers the service depends on, from /proc like the service's own: the Redis server
 * (its pid from INFO, so the right one when several run) and the PostgreSQL backends serving the
 * service (its connections carry the run's application_name, so other clients of the same
 * PostgreSQL, other agents' tests among them, are not counted). Redis has no such split: whatever
 * else uses the same Redis meanwhile is counted, which the baseline's measurement (the service idle)
 * shows as a floor.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { ownTicks } from './proc.js';

export interface DependencyTicks {
  redis: number;
  /** Per backend pid: its own CPU ticks so far. */
  postgres: Map<number, number>;
}

export interface DependencyCpu {
  sample(): Promise<DependencyTicks>;
  close(): Promise<void>;
}

function ticksOr0(pid: number): number {
  try {
    return ownTicks(pid);
  } catch {
    return 0; // ended meanwhile
  }
}

export async function dependencyCpu(options: {
  postgresUrl: string;
  redisUrl: string;
  applicationName: string;
}): Promise<DependencyCpu> {
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  await redis.connect();
  const info = await redis.info('server');
  redis.disconnect();
  const redisPid = Number(/^process_id:(\d+)/m.exec(info)?.[1]);
  if (!Number.isInteger(redisPid)) throw new Error('INFO server gave no process_id');
  const client = new pg.Client({ connectionString: options.postgresUrl });
  await client.connect();
  return {
    async sample() {
      const { rows } = await client.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
        [options.applicationName],
      );
      return {
        redis: ticksOr0(redisPid),
        postgres: new Map(rows.map(({ pid }) => [pid, ticksOr0(pid)])),
      };
    },
    close: () => client.end(),
  };
}

/**
 * Ticks spent between two samples. A backend that appeared meanwhile counts whole; one that ended
 * meanwhile is lost (the service's pool keeps its connections under load, so this is rare).
 */
export function dependencyTicksBetween(before: DependencyTicks, after: DependencyTicks) {
  let postgres = 0;
  for (const [pid, ticks] of after.postgres) postgres += ticks - (before.postgres.get(pid) ?? 0);
  return { redis: after.redis - before.redis, postgres };
}
