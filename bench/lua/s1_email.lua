-- Scenario 1, the hot path: breach-search by email, one record per page, rotating through
-- every sample email (thousands of different rows, so no single cached row).
-- Also run unchanged against nginx for the ceiling (nginx answers every path with one
-- static file, so the client-side work per request is identical).
package.path = (os.getenv("BENCH_LUA") or "bench/lua") .. "/?.lua;" .. package.path
local c = require("common")
setup, done = c.setup, c.done

function init(args)
  math.randomseed(c.seed + id)
  local paths = {}
  for i, e in ipairs(c.lines("emails.txt")) do paths[i] = c.email_path(e) end
  request = c.rotation(paths, id)
end
