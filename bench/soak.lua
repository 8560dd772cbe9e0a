-- The keyed traffic of `npm run soak` (bench/README.md, "Soak"), for wrk, one interval per run:
--   wrk -t1 -cN -dSECONDS -s bench/soak.lua URL -- PETS KEYS_FILE DELAY_MS RUN_TAG [hostile-forwarded-for]
-- Paced: each connection waits DELAY_MS (fractional, rounded at random to whole ms, which is what
-- wrk's delay() takes) before each request, so N connections send about N / (DELAY_MS + latency)
-- requests a second; bench/soak.ts adjusts DELAY_MS between runs to hold its target rate.
-- Keys are taken round-robin from KEYS_FILE (one a line); the first key sends every
-- Idempotency-Key, each unique to RUN_TAG and this run, so their records accumulate.
-- With hostile-forwarded-for (the service runs with TRUST_PROXY=true), every request carries a
-- made-up X-Forwarded-For, new each time: junk of up to 4 KB, or a random IPv4 or IPv6 address.
-- done() prints BENCH_RESULT {json}, as bench/load.lua does.

local pets, delayMs, runTag, hostile
local keys = {}
local n, idempotent = 0, 0
local nextPages = {}
local STATUSES = { "available", "pending", "sold" }
local BODY = '{"name":"Soak Rex","categoryId":7,"status":"pending"}'
local REPLAY_BODY = '{"name":"Soak replay","categoryId":7}'

-- One cycle of 36: 6 list, 3 list by status, 3 next pages, 10 getPet (deprecated), 4 creates,
-- 8 creates with a new Idempotency-Key, 2 replays of an earlier one.
local CYCLE = {
  "list", "get", "create-idempotent", "list-status", "get", "list-next",
  "list", "get", "create", "create-idempotent", "get", "list-status",
  "list", "get", "create-idempotent", "list-next", "get", "replay",
  "list", "get", "create", "create-idempotent", "get", "list-status",
  "list", "create-idempotent", "get", "list-next", "create", "create-idempotent",
  "list", "get", "create-idempotent", "create", "replay", "list-status",
}

responses = 0
unexpected = 0
codes = ""
idempotentSent = 0

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  pets, delayMs, runTag = tonumber(args[1]), tonumber(args[3]), args[4]
  hostile = args[5] == "hostile-forwarded-for"
  for line in io.lines(args[2]) do
    if line ~= "" then keys[#keys + 1] = line end
  end
  math.randomseed(os.time())
end

function delay()
  local whole = math.floor(delayMs)
  if math.random() < delayMs - whole then whole = whole + 1 end
  return whole
end

-- A third junk of random length (up to 4 KB), a third IPv4, a third IPv6; new every request.
local function forwardedFor()
  local pick = n % 3
  if pick == 0 then
    return "junk-" .. n .. "-" .. string.rep("x", math.random(0, 4096))
  elseif pick == 1 then
    return string.format("%d.%d.%d.%d", math.random(0, 223), math.random(0, 255),
      math.random(0, 255), math.random(0, 255))
  end
  return string.format("2001:db8:%x:%x::%x", math.random(0, 65535), math.random(0, 65535),
    math.random(0, 65535))
end

local function headersFor(key, extra)
  local headers = { ["Authorization"] = "Bearer " .. key }
  if hostile then headers["X-Forwarded-For"] = forwardedFor() end
  if extra then for k, v in pairs(extra) do headers[k] = v end end
  return headers
end

function request()
  n = n + 1
  local kind = CYCLE[n % #CYCLE + 1]
  local key = keys[n % #keys + 1]
  if kind == "list" then
    return wrk.format("GET", "/v1/pets?limit=20", headersFor(key))
  elseif kind == "list-status" then
    return wrk.format("GET", "/v1/pets?limit=20&status=" .. STATUSES[n % 3 + 1], headersFor(key))
  elseif kind == "list-next" then
    local path = table.remove(nextPages, 1) or ("/v1/pets?limit=20&status=" .. STATUSES[n % 3 + 1])
    return wrk.format("GET", path, headersFor(key))
  elseif kind == "get" then
    return wrk.format("GET", "/v1/pets/" .. ((n * 7919) % pets + 1), headersFor(key))
  elseif kind == "create" then
    return wrk.format("POST", "/v1/pets", headersFor(key, { ["Content-Type"] = "application/json" }), BODY)
  elseif kind == "create-idempotent" then
    idempotent = idempotent + 1
    idempotentSent = idempotent
    return wrk.format("POST", "/v1/pets", headersFor(keys[1], {
      ["Content-Type"] = "application/json",
      ["Idempotency-Key"] = "soak-" .. runTag .. "-" .. idempotent,
    }), REPLAY_BODY)
  else -- replay: an Idempotency-Key sent a while ago, same API key, same body
    return wrk.format("POST", "/v1/pets", headersFor(keys[1], {
      ["Content-Type"] = "application/json",
      ["Idempotency-Key"] = "soak-" .. runTag .. "-" .. math.max(1, idempotent - 50),
    }), REPLAY_BODY)
  end
end

-- 2xx, or 409 for a replay whose create is still running; anything else is unexpected.
function response(status, headers, body)
  responses = responses + 1
  local ok = (status >= 200 and status <= 299) or status == 409
  if not ok then
    unexpected = unexpected + 1
    if unexpected <= 20 then codes = codes .. status .. " " end
    return
  end
  local link = headers["link"] or headers["Link"]
  local path = link and link:match("^<https?://[^/]+(/[^>]*)>; rel=\"next\"")
  -- One walk in four stops, so walks stay short.
  if path and #nextPages < 256 and responses % 4 ~= 0 then nextPages[#nextPages + 1] = path end
end

function done(summary, latency, requests)
  local total, bad, seen, idem = 0, 0, "", 0
  for _, thread in ipairs(threads) do
    total = total + thread:get("responses")
    bad = bad + thread:get("unexpected")
    seen = seen .. thread:get("codes")
    idem = idem + thread:get("idempotentSent")
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"durationUs":%d,"responses":%d,"unexpected":%d,' ..
    '"unexpectedStatuses":"%s","socketErrors":%d,"timeouts":%d,"idempotent":%d,' ..
    '"p50Us":%d,"p99Us":%d,"meanUs":%.1f,"maxUs":%d}\n',
    summary.requests, summary.duration, total, bad, seen,
    e.connect + e.read + e.write, e.timeout, idem,
    latency:percentile(50), latency:percentile(99), latency.mean, latency.max))
end
