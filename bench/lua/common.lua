-- Shared helpers for the breachd wrk scenarios. Each scenario script does
--   package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
--   local c = require("common")
-- and gets its key, data directory and base path from the environment that bench/run.py
-- sets: BENCH_KEY, BENCH_DATA (the corpus directory with emails.txt, domains.txt, bins.txt,
-- owners.txt), BENCH_BASE (default /v7), BENCH_SEED.
--
-- wrk gives each thread its own Lua state; setup() and done() run in a third one. So the
-- per-thread counters live in globals that done() reads back with thread:get().
local M = {}

M.key = os.getenv("BENCH_KEY") or ""
M.data = os.getenv("BENCH_DATA") or "."
M.base = os.getenv("BENCH_BASE") or "/v7"
M.seed = tonumber(os.getenv("BENCH_SEED") or "7")
M.headers = { ["x-api-key"] = M.key }

function M.lines(name)
  local t = {}
  local f = assert(io.open(M.data .. "/" .. name, "r"), "cannot open " .. name)
  for line in f:lines() do
    if line ~= "" then t[#t + 1] = line end
  end
  f:close()
  assert(#t > 0, name .. " is empty")
  return t
end

function M.urlencode(s)
  return (s:gsub("[^%w%-%._~]", function(ch)
    return string.format("%%%02X", string.byte(ch))
  end))
end

-- Request builders (paths only; M.get turns a path into a request string). bench/one_conn_paths.py
-- builds the same paths for the one-connection runs: a change here goes there too.
function M.email_path(email)
  return M.base .. "/breach-search?type=email&account=" .. M.urlencode(email)
    .. "&number_of_records=1"
end

function M.domain_path(domain, token)
  local p = M.base .. "/breach-search?type=email_domain&account=" .. M.urlencode(domain)
    .. "&number_of_records=100"
  if token then p = p .. "&paging_token=" .. M.urlencode(token) end
  return p
end

function M.catalog_path()
  return M.base .. "/breaches"
end

function M.bin_path(bin)
  return M.base .. "/credit-card-search?query=" .. M.urlencode("number:" .. bin .. "*")
    .. "&size=20"
end

function M.owner_path(word, year)
  local q = "owner:" .. word .. " AND expireDate:[" .. year .. "-01-01 TO *]"
  return M.base .. "/credit-card-search?query=" .. M.urlencode(q)
    .. "&sort=" .. M.urlencode("expireDate,asc") .. "&size=20"
end

function M.get(path)
  return wrk.format("GET", path, M.headers)
end

-- A rotation through a list of precomputed request strings, starting at a per-thread
-- offset so the two threads do not walk in step.
function M.rotation(paths, thread_id)
  local n = #paths
  local reqs = {}
  for i = 1, n do reqs[i] = M.get(paths[i]) end
  local i = ((thread_id or 1) - 1) * math.floor(n / 2)
  return function()
    i = i % n + 1
    return reqs[i]
  end
end

-- Token following for the email_domain scenario. wrk has no per-connection state in Lua,
-- so a response cannot tell which request it answers; instead every 100-record page that
-- carries a pagination_token queues (domain, token), and the next request of this thread
-- takes from the queue when it is not empty, else starts page 1 of the next domain. A
-- queued page is followed with probability follow_p (default 0.5), so chains are about
-- two pages long on average: half the requests are first pages (which count
-- records_found), half follow a token. The counts are reported by done().
function M.pager(domains, thread_id, follow_p)
  local P = { queue = {}, head = 1, tail = 0, i = ((thread_id or 1) - 1) * 7,
              n = #domains, follow_p = follow_p or 0.5 }
  first_pages, followed = first_pages or 0, followed or 0
  function P.next_path()
    if P.head <= P.tail then
      local e = P.queue[P.head]
      P.queue[P.head] = nil
      P.head = P.head + 1
      followed = followed + 1
      return M.domain_path(e[1], e[2])
    end
    P.i = P.i % P.n + 1
    first_pages = first_pages + 1
    return M.domain_path(domains[P.i], nil)
  end
  -- Looks at a response body; queues its token when it is a domain page worth following.
  function P.response(status, body)
    if status ~= 200 or #body < 8192 then return end
    if body:sub(1, 16) ~= '{"records_found"' then return end
    local tok = body:match('^{"records_found":%d+,"pagination_token":"([^"]+)"')
    if not tok then return end
    if math.random() >= P.follow_p then return end
    local dom = body:match('"email_domain":"([^"]+)"', 1)
    if not dom then return end
    P.tail = P.tail + 1
    P.queue[P.tail] = { dom, tok }
  end
  return P
end

-- setup()/done() shared by every scenario: numbers the threads and prints one
-- machine-readable line that bench/run.py parses.
local threads = {}

function M.setup(thread)
  thread:set("id", #threads + 1)
  threads[#threads + 1] = thread
end

function M.done(summary, latency, requests)
  local first, followed = 0, 0
  for _, t in ipairs(threads) do
    first = first + (t:get("first_pages") or 0)
    followed = followed + (t:get("followed") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH {"requests":%d,"duration_us":%d,"bytes":%d,"err_connect":%d,"err_read":%d,'
    .. '"err_write":%d,"err_status":%d,"err_timeout":%d,"lat_mean_us":%.1f,'
    .. '"lat_p50_us":%d,"lat_p90_us":%d,"lat_p99_us":%d,"lat_p999_us":%d,"lat_max_us":%d,'
    .. '"first_pages":%d,"followed":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status,
    e.timeout, latency.mean, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency:percentile(99.9), latency.max, first, followed))
end

return M
