import type { RedisConfig } from '../../config/config.js';
import type {
  ConsumeOutcome,
  ConsumeRequest,
  LimitWindow,
  RateLimitStore,
} from '../../domain/ports.js';
import {
  callRedis,
  closeRedisConnection,
  firstConnectionAttempt,
  openRedisConnection,
  pingRedis,
  type RedisClient,
  type RedisConnectionOptions,
} from './redis-connection.js';

/**
 * How long a key outlives the end of its window or ban. The key names its window, so an old
 * window's key is never read again and this margin only delays its removal. It absorbs the
 * milliseconds between two requests at the very end of a window and clock differences between
 * instances: an instance a second behind must still find the window's count.
 */
export const KEY_GRACE_MS = 10_000;

/*
 * Keys of one subject, all sharing the hash tag `{subject}` so a script touching them runs on one
 * Redis Cluster node:
 *   <prefix>{<subject>}:<lengthMs>:<window number>  hash {used, refused}: one window's requests
 *       counted and 429s given; expires KEY_GRACE_MS after that window ends.
 *   <prefix>{<subject>}:ban                         hash {startedAt, until}; expires KEY_GRACE_MS
 *       after the ban ends.
 * Times are the `now` the caller passes (its clock), never Redis TIME, so windows follow the same
 * clock as the responses' headers and tests move time. TTLs are therefore relative (PEXPIRE,
 * measured from `now`) rather than absolute: an absolute end would be read on Redis's clock.
 */

/**
 * KEYS: the ban key, then one key per window in request order.
 * ARGV: now, ban `after` (-1: no ban rules), the end and the TTL of a ban starting now; then per
 * window its limit and its TTL. Same rules as MemoryRateLimitStore; the whole check runs atomically in Redis, so the
 * limits are exact across every instance.
 * Returns {'allowed', used} | {'limited', used, refused (0-based)} |
 *         {'banned', used, startedAt, until, started (0/1)}.
 */
const CONSUME_LUA = `
local windows = #KEYS - 1
local now = tonumber(ARGV[1])
local after = tonumber(ARGV[2])
local used = {}
for i = 1, windows do
  used[i] = tonumber(redis.call('HGET', KEYS[i + 1], 'used') or '0')
end

local ban = redis.call('HMGET', KEYS[1], 'startedAt', 'until')
if ban[1] then
  if tonumber(ban[2]) > now then
    return {'banned', used, ban[1], ban[2], 0}
  end
  redis.call('DEL', KEYS[1])
end

local refused = {}
for i = 1, windows do
  if used[i] >= tonumber(ARGV[3 + 2 * i]) then refused[#refused + 1] = i end
end

if #refused == 0 then
  for i = 1, windows do
    used[i] = redis.call('HINCRBY', KEYS[i + 1], 'used', 1)
    redis.call('PEXPIRE', KEYS[i + 1], ARGV[4 + 2 * i])
  end
  return {'allowed', used}
end

-- The first 429 in a window is free, after more are tolerated, the next one starts a ban.
local startBan = false
for _, i in ipairs(refused) do
  -- The key may be new here (a limit of 0), so it gets its TTL like any other write.
  local count = redis.call('HINCRBY', KEYS[i + 1], 'refused', 1)
  redis.call('PEXPIRE', KEYS[i + 1], ARGV[4 + 2 * i])
  if after >= 0 and count > after + 1 then startBan = true end
end

if startBan then
  redis.call('HSET', KEYS[1], 'startedAt', ARGV[1], 'until', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  -- A ban settles the offence: after it, the key gets its full tolerance again.
  for i = 1, windows do redis.call('HDEL', KEYS[i + 1], 'refused') end
  return {'banned', used, ARGV[1], ARGV[3], 1}
end

local indexes = {}
for n, i in ipairs(refused) do indexes[n] = i - 1 end
return {'limited', used, indexes}
`;

/** KEYS: one key per window. Returns what each has counted. */
const PEEK_LUA = `
local used = {}
for i = 1, #KEYS do
  used[i] = tonumber(redis.call('HGET', KEYS[i], 'used') or '0')
end
return used
`;

/**
 * KEYS: the ban key. ARGV: liftedAt. Refusals need no forgetting here: a ban clears them when it
 * starts and requests during a ban count none, so while a ban key exists every count is zero.
 */
const LIFT_LUA = `
local startedAt = redis.call('HGET', KEYS[1], 'startedAt')
if startedAt and tonumber(startedAt) <= tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[1])
end
return 0
`;

type ScriptArgument = string | number;

/** The connection with the commands `defineCommand` adds; ioredis cannot type them itself. */
type ScriptedRedis = RedisClient & {
  rateLimitConsume(keyCount: number, ...args: ScriptArgument[]): Promise<unknown>;
  rateLimitPeek(keyCount: number, ...keys: string[]): Promise<unknown>;
  rateLimitLift(keyCount: number, banKey: string, liftedAt: number): Promise<unknown>;
};

function withScripts(client: RedisClient): ScriptedRedis {
  // defineCommand sends EVALSHA and, when Redis answers NOSCRIPT (restarted, SCRIPT FLUSH, a
  // failover), loads the script with EVAL on that connection and runs it again.
  client.defineCommand('rateLimitConsume', { lua: CONSUME_LUA });
  client.defineCommand('rateLimitPeek', { lua: PEEK_LUA, readOnly: true });
  client.defineCommand('rateLimitLift', { lua: LIFT_LUA });
  return client as ScriptedRedis;
}

const windowNumber = (window: LimitWindow, now: number) => Math.floor(now / window.lengthMs);

/**
 * Counters and bans in Redis, shared by every instance of the service. Each consume is one script
 * run (one round trip); a failure of Redis rejects with DependencyUnavailableError, never hangs.
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly backend = 'redis';
  private readonly client: ScriptedRedis;

  constructor(
    client: RedisClient,
    private readonly keyPrefix: string,
  ) {
    this.client = withScripts(client);
  }

  async consume(request: ConsumeRequest): Promise<ConsumeOutcome> {
    const { subject, windows, now, ban } = request;
    const keys = [this.banKey(subject), ...windows.map((w) => this.windowKey(subject, w, now))];
    const args: ScriptArgument[] = [
      now,
      ban ? ban.after : -1,
      ban ? now + ban.durationMs : 0,
      ban ? Math.ceil(ban.durationMs + KEY_GRACE_MS) : 0,
    ];
    for (const window of windows) {
      const endsAt = (windowNumber(window, now) + 1) * window.lengthMs;
      args.push(window.limit, Math.ceil(endsAt - now + KEY_GRACE_MS));
    }
    const reply = await callRedis(() =>
      this.client.rateLimitConsume(keys.length, ...keys, ...args),
    );
    return parseOutcome(reply, windows.length);
  }

  async peek(subject: string, windows: readonly LimitWindow[], now: number): Promise<number[]> {
    if (windows.length === 0) return [];
    const keys = windows.map((w) => this.windowKey(subject, w, now));
    const reply = await callRedis(() => this.client.rateLimitPeek(keys.length, ...keys));
    return counts(reply, windows.length);
  }

  async lift(subject: string, liftedAt: number): Promise<void> {
    await callRedis(() => this.client.rateLimitLift(1, this.banKey(subject), liftedAt));
  }

  async ping(): Promise<void> {
    await callRedis(() => pingRedis(this.client));
  }

  async close(): Promise<void> {
    await closeRedisConnection(this.client);
  }

  private banKey(subject: string): string {
    return `${this.keyPrefix}{${subject}}:ban`;
  }

  private windowKey(subject: string, window: LimitWindow, now: number): string {
    return `${this.keyPrefix}{${subject}}:${window.lengthMs}:${windowNumber(window, now)}`;
  }
}

/**
 * Opens the store on its own connection. Resolves once the first connection attempt ended: when
 * Redis is down the store is returned anyway; its calls reject with DependencyUnavailableError
 * until Redis returns, and then succeed without a restart.
 */
export async function createRedisRateLimitStore(
  config: RedisConfig,
  options: RedisConnectionOptions = {},
): Promise<RedisRateLimitStore> {
  const client = openRedisConnection(config, 'petstore-rate-limits', options);
  await firstConnectionAttempt(client, Math.max(config.commandTimeoutMs, 2_000));
  return new RedisRateLimitStore(client, config.keyPrefix);
}

/** An array of integers (of `length` items, when given) from a script reply. */
function counts(value: unknown, length?: number): number[] {
  if (
    !Array.isArray(value) ||
    (length !== undefined && value.length !== length) ||
    !value.every((n): n is number => Number.isSafeInteger(n))
  ) {
    throw new Error(`unexpected counts from the rate-limit script: ${JSON.stringify(value)}`);
  }
  return value;
}

function parseOutcome(reply: unknown, windowCount: number): ConsumeOutcome {
  const fail = () => {
    throw new Error(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
  };
  if (!Array.isArray(reply)) return fail();
  const [kind, used, ...rest] = reply as unknown[];
  switch (kind) {
    case 'allowed':
      return { kind, used: counts(used, windowCount) };
    case 'limited':
      return { kind, used: counts(used, windowCount), refused: counts(rest[0]) };
    case 'banned': {
      const [startedAt, until, started] = rest.map(Number);
      if (!Number.isSafeInteger(startedAt) || !Number.isSafeInteger(until)) return fail();
      return {
        kind,
        used: counts(used, windowCount),
        ban: { startedAt: startedAt as number, until: until as number },
        started: started === 1,
      };
    }
    default:
      return fail();
  }
}
