-- The requests of `npm run bench` (bench/README.md), for wrk. Started by bench/load-runner.ts:
--   wrk ... -s bench/load.lua http://127.0.0.1:PORT -- SCENARIO PETS KEYS_FILE DELAY_MS [START_PATH ...]
-- KEYS_FILE is "-" for the one key of wrk's Authorization header (-H); otherwise a file of keys, one
-- a line, and each request carries one of them, taken in a fixed pseudo-random order (--keys).
-- DELAY_MS: how long each connection waits after an answer before its next request (--rate); 0: none.
-- Every response is checked: one outside 200-299 counts as unexpected (list-304: but 304). done() prints one line,
-- BENCH_RESULT {json}, that load-runner.ts reads.

local scenario, pets
local fixed          -- the one request of list and list-status
local gets = {}      -- GET /v1/pets/{id} over existing ids, spread over the whole range
local create         -- POST /v1/pets
local starts = {}    -- list-cursor: the first page and deep pages to start walks from
local mix = {}       -- one cycle of mix: 4 list, 4 get, 2 create
local queue = {}     -- list-cursor: next pages to fetch, from the Link of earlier responses
local n = 0
local keys = {}      -- --keys: every request formatted again with its own Authorization
local keyIndex = 0
local pause = 0      -- DELAY_MS

-- Read by done() through thread:get; globals of each thread's Lua state.
responses = 0
unexpected = 0
codes = ""           -- "429:12 500:1": the unexpected statuses, for the error message

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

local GET_SAMPLES = 4096
local BODY = '{"name":"Bench Rex","categoryId":3,"status":"available"}'
-- Walks through next pages end after this many pages on average (one Link in this many is not followed).
local WALK = 8

-- One request; with several keys the pre-formatted one is formatted again with the next key.
-- `extra`: headers beside wrk's own (-H), e.g. Accept-Encoding.
local function req(method, path, body, extra)
  local headers = nil
  if extra then
    headers = {}
    for name, value in pairs(wrk.headers) do headers[name] = value end
    for name, value in pairs(extra) do headers[name] = value end
  end
  return { method = method, path = path, body = body, extra = extra,
           raw = wrk.format(method, path, headers, body) }
end

local function send(r)
  if #keys == 0 then return r.raw end
  -- Steps of 7919 (a prime) over the keys: each key in turn unless their count is a multiple of it,
  -- and neighbouring requests far apart in the list.
  keyIndex = (keyIndex + 7919) % #keys
  local headers = { Authorization = "Bearer " .. keys[keyIndex + 1] }
  if r.body then headers["Content-Type"] = "application/json" end
  if r.extra then
    for name, value in pairs(r.extra) do headers[name] = value end
  end
  return wrk.format(r.method, r.path, headers, r.body)
end

function init(args)
  scenario, pets, pause = args[1], tonumber(args[2]), tonumber(args[4])
  -- Defined only when pacing: wrk looks for it after init, and then waits before every request.
  if pause > 0 then
    function delay() return pause end
  end
  if args[3] ~= "-" then
    for line in io.lines(args[3]) do
      if line ~= "" then keys[#keys + 1] = line end
    end
  end
  local headers = {}
  for name, value in pairs(wrk.headers) do headers[name] = value end
  headers["Content-Type"] = "application/json"
  create = { method = "POST", path = "/v1/pets", body = BODY,
             raw = wrk.format("POST", "/v1/pets", headers, BODY) }
  -- A fixed pseudo-random sequence of ids over 1..pets (Park-Miller), the same every run.
  local seed = 20261124
  for i = 1, GET_SAMPLES do
    seed = (seed * 16807) % 2147483647
    gets[i] = req("GET", "/v1/pets/" .. (seed % pets + 1))
  end
  if scenario == "list" or scenario == "list-304" then
    -- list-304: the first answer's ETag is sent back with every request after it (response()).
    fixed = req("GET", "/v1/pets?limit=20")
  elseif scenario == "list-gzip" then
    fixed = req("GET", "/v1/pets?limit=20", nil, { ["Accept-Encoding"] = "gzip, br" })
  elseif scenario == "list-status" then
    fixed = req("GET", "/v1/pets?limit=20&status=available")
  elseif scenario == "list-cursor" then
    -- The last path is list-last's; the others start walks.
    for i = 5, #args - 1 do starts[#starts + 1] = req("GET", args[i]) end
  elseif scenario == "list-last" then
    fixed = req("GET", args[#args])
  elseif scenario == "mix" then
    local list = req("GET", "/v1/pets?limit=20")
    mix = { list, "get", list, "get", create, list, "get", list, "get", create }
  elseif scenario ~= "get" and scenario ~= "create" then
    error("unknown scenario " .. tostring(scenario))
  end
end

local function pick()
  n = n + 1
  if fixed then return fixed end
  if scenario == "get" then return gets[n % GET_SAMPLES + 1] end
  if scenario == "create" then return create end
  if scenario == "list-cursor" then
    local path = table.remove(queue)
    if path then return req("GET", path) end
    return starts[n % #starts + 1]
  end
  local next = mix[n % #mix + 1]
  if next == "get" then return gets[n % GET_SAMPLES + 1] end
  return next
end

function request()
  return send(pick())
end


function response(status, headers, body)
  responses = responses + 1
  if scenario == "list-304" then
    local etag = headers["etag"] or headers["ETag"]
    if status == 200 and etag then
      fixed = req("GET", "/v1/pets?limit=20", nil, { ["If-None-Match"] = etag })
    end
    if status == 304 then return end
  end
  if status < 200 or status > 299 then
    unexpected = unexpected + 1
    if unexpected <= 20 then codes = codes .. status .. " " end
    return
  end
  if scenario == "list-cursor" and responses % WALK ~= 0 then
    local link = headers["link"] or headers["Link"]
    local path = link and link:match("^<https?://[^/]+(/[^>]*)>; rel=\"next\"")
    if path then queue[#queue + 1] = path end
  end
end

function done(summary, latency, requests)
  local total, bad, seen = 0, 0, ""
  for _, thread in ipairs(threads) do
    total = total + thread:get("responses")
    bad = bad + thread:get("unexpected")
    seen = seen .. thread:get("codes")
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"durationUs":%d,"responses":%d,"unexpected":%d,' ..
    '"unexpectedStatuses":"%s","socketErrors":%d,"timeouts":%d,' ..
    '"p50Us":%d,"p99Us":%d,"meanUs":%.1f,"maxUs":%d}\n',
    summary.requests, summary.duration, total, bad, seen,
    e.connect + e.read + e.write, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.mean, latency.max))
end
