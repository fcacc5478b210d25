-- Scenario 2: breach-search by email_domain, 100 records a page, following the
-- pagination_token of a page into the next one (see common.lua's pager for how, given that
-- wrk has no per-connection state).
package.path = (os.getenv("BENCH_LUA") or "bench/lua") .. "/?.lua;" .. package.path
local c = require("common")
setup, done = c.setup, c.done

local pager
function init(args)
  math.randomseed(c.seed + id)
  pager = c.pager(c.lines("domains.txt"), id, tonumber(args[1] or "0.5"))
end
function request()
  return c.get(pager.next_path())
end
function response(status, headers, body)
  pager.response(status, body)
end
