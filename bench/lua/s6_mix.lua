-- Scenario 6: a mix of the five, in a fixed cycle of 20 requests: 12 email searches (60%),
-- 2 domain pages (10%, page 1 or a followed token), 1 catalog (5%), 3 BIN searches (15%),
-- 2 owner+expiry searches (10%).
package.path = (os.getenv("BENCH_LUA") or "bench/lua") .. "/?.lua;" .. package.path
local c = require("common")
setup, done = c.setup, c.done

local email, bin, owner, pager, catalog
local cycle = { 1, 4, 1, 5, 1, 2, 1, 4, 1, 1, 3, 1, 4, 1, 5, 1, 2, 1, 1, 1 }
local k = 0
function init(args)
  math.randomseed(c.seed + id)
  local p = {}
  for i, e in ipairs(c.lines("emails.txt")) do p[i] = c.email_path(e) end
  email = c.rotation(p, id)
  p = {}
  for i, b in ipairs(c.lines("bins.txt")) do p[i] = c.bin_path(b) end
  bin = c.rotation(p, id)
  p = {}
  local years = { 2025, 2026, 2027, 2028, 2029 }
  for i, w in ipairs(c.lines("owners.txt")) do p[i] = c.owner_path(w, years[(i - 1) % 5 + 1]) end
  owner = c.rotation(p, id)
  catalog = c.rotation({ c.catalog_path() }, id)
  pager = c.pager(c.lines("domains.txt"), id, 0.5)
  k = (id - 1) * 10
end
function request()
  k = k % #cycle + 1
  local s = cycle[k]
  if s == 1 then return email()
  elseif s == 2 then return c.get(pager.next_path())
  elseif s == 3 then return catalog()
  elseif s == 4 then return bin()
  else return owner() end
end
function response(status, headers, body)
  pager.response(status, body)
end
