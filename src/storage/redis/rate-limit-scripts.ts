/*
 * The Lua scripts of the Redis rate-limit store. Keys of one subject share the hash tag
 * `{subject}`, so a script touching them runs on one Redis Cluster node:
 *   <base>:<lengthMs>:<window number>  hash {used, refused}: requests granted to instances (served
 *       or leased, minus what was given back) and 429s given in one window; expires KEY_GRACE_MS
 *       after that window ends.
 *   <base>:ban                          hash {startedAt, until}; expires KEY_GRACE_MS after the
 *       ban ends.
 * where <base> is `<prefix>{<subject>}`. Every key a script touches is declared in KEYS, as managed
 * and proxy Redis require: KEYS[1] is always the ban key, then the window keys the caller expects.
 * A window's number follows the time the script reads, so that every instance names the same
 * window whatever its own clock says; the caller declares the windows around its estimate of that
 * time, and when the window at the script's `now` is not among them the script changes nothing and
 * answers {'retry', now}: the caller corrects its estimate and asks again.
 *
 * Time: ARGV[1] is `now` in epoch ms, or -1 to read the Redis server's TIME, the one clock every
 * instance shares. Every reply ends with the `now` the script decided at. TTLs are relative
 * (PEXPIRE from that `now`).
 */

/** Shared by the scripts: reads `now`, and finds the declared key of a window at `now`. */
const PRELUDE = `
local now = tonumber(ARGV[1])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local grace = tonumber(ARGV[2])
local base = string.sub(KEYS[1], 1, -5)
local declared = {}
for i = 2, #KEYS do declared[KEYS[i]] = true end
-- The key of the window of this length at now, its number and TTL; nil when it was not declared.
local function windowKey(len)
  local number = math.floor(now / len)
  local key = base .. ':' .. len .. ':' .. number
  if not declared[key] then return nil end
  return key, number, (number + 1) * len - now + grace
end
`;

/**
 * Grants `want` requests (a lease) in every window at once, or refuses.
 * ARGV: now, grace, ban `after` (-1: no ban rules), ban duration, want; then per window its
 * length, limit, and a floor: the window number and the count this instance last saw in it, which
 * a window key missing mid-window (Redis restarted without its data) starts from, and which raises
 * the count of such a restored window for the rest of it when it is higher than any floor before.
 * Returns {'allowed', used, granted, restored, now} | {'limited', used, refused (0-based), restored,
 * now} | {'banned', used, startedAt, until, started (0/1), restored, now} | {'retry', now} (a
window's key not declared), where `restored` says
 * per window (0/1) whether its count was rebuilt after Redis lost it: the instance then keeps the
 * floor it had, since what it sees since is no longer knowledge from before the loss.
 * `used` holds each window's count after the grant. The grant is the smallest room left in any
 * window, at most `want`: no window ever grants past its limit, across every instance.
 */
export const LEASE_LUA = `${PRELUDE}
local after = tonumber(ARGV[3])
local banMs = tonumber(ARGV[4])
local want = tonumber(ARGV[5])
local windows = (#ARGV - 5) / 4
local keys, numbers, ttls, used, restored = {}, {}, {}, {}, {}
for i = 1, windows do
  keys[i], numbers[i], ttls[i] = windowKey(tonumber(ARGV[5 + 4 * (i - 1) + 1]))
  if not keys[i] then return {'retry', now} end
end
local room = want
for i = 1, windows do
  local at = 5 + 4 * (i - 1)
  local key, number, ttl = keys[i], numbers[i], ttls[i]
  local state = redis.call('HMGET', key, 'used', 'restored')
  used[i] = tonumber(state[1] or '0')
  -- A key of the current window is only missing when Redis lost it (a restart without its data).
  -- For the rest of that window it counts what was granted since, on top of the most any
  -- instance asking knew was counted before (its 'restored' field), so the quota is not handed out again.
  local floor = tonumber(ARGV[at + 4])
  local base = tonumber(state[2] or '-1')
  if tonumber(ARGV[at + 3]) == number and floor > 0 and (not state[1] or base >= 0) then
    if base < 0 then base = 0 end
    if floor > base then
      used[i] = used[i] + floor - base
      base = floor
      redis.call('HSET', key, 'used', used[i], 'restored', base)
      redis.call('PEXPIRE', key, ttl)
    end
  end
  restored[i] = base >= 0 and 1 or 0
  local left = tonumber(ARGV[at + 2]) - used[i]
  if left < room then room = left end
end

local ban = redis.call('HMGET', KEYS[1], 'startedAt', 'until')
if ban[1] then
  if tonumber(ban[2]) > now then
    return {'banned', used, ban[1], ban[2], 0, restored, now}
  end
  redis.call('DEL', KEYS[1])
end

if room >= 1 then
  for i = 1, windows do
    used[i] = redis.call('HINCRBY', keys[i], 'used', room)
    redis.call('PEXPIRE', keys[i], ttls[i])
  end
  return {'allowed', used, room, restored, now}
end

-- The first 429 in a window is free, after more are tolerated, the next one starts a ban.
local refused = {}
local startBan = false
for i = 1, windows do
  if used[i] >= tonumber(ARGV[5 + 4 * (i - 1) + 2]) then
    refused[#refused + 1] = i - 1
    -- The key may be new here (a limit of 0), so it gets its TTL like any other write.
    local count = redis.call('HINCRBY', keys[i], 'refused', 1)
    redis.call('PEXPIRE', keys[i], ttls[i])
    if after >= 0 and count > after + 1 then startBan = true end
  end
end

if startBan then
  redis.call('HSET', KEYS[1], 'startedAt', now, 'until', now + banMs)
  redis.call('PEXPIRE', KEYS[1], banMs + grace)
  -- A ban ends the offence: after it, the key gets its full tolerance again.
  for i = 1, windows do redis.call('HDEL', keys[i], 'refused') end
  return {'banned', used, now, now + banMs, 1, restored, now}
end
return {'limited', used, refused, restored, now}
`;

/**
 * Gives back `count` requests leased but not spent, in the windows they were taken from.
 * KEYS: the ban key (unused), then the window keys of the lease. ARGV: now (unused), grace
 * (unused), count. A key that is gone (its window ended, or Redis lost it) is left alone.
 */
export const GIVE_BACK_LUA = `
local count = tonumber(ARGV[3])
for i = 2, #KEYS do
  local used = tonumber(redis.call('HGET', KEYS[i], 'used') or '-1')
  if used >= count then redis.call('HINCRBY', KEYS[i], 'used', -count) end
end
return 0
`;

/**
 * ARGV: now, grace, then each window's length. Returns each window's count, then `now`; or
 * {'retry', now} when a window's key at `now` was not declared.
 */
export const PEEK_LUA = `${PRELUDE}
local used = {}
for i = 3, #ARGV do
  local key = windowKey(tonumber(ARGV[i]))
  if not key then return {'retry', now} end
  used[#used + 1] = tonumber(redis.call('HGET', key, 'used') or '0')
end
used[#used + 1] = now
return used
`;

/**
 * Ends a ban that started at or before `now` (ARGV[1]: the lift's time, or -1 for Redis's TIME).
 * Refusals need no forgetting here: a ban clears them when it starts and requests during a ban
 * count none, so while a ban key exists every count is zero.
 */
export const LIFT_LUA = `${PRELUDE}
local startedAt = redis.call('HGET', KEYS[1], 'startedAt')
if startedAt and tonumber(startedAt) <= now then
  redis.call('DEL', KEYS[1])
end
return 0
`;
