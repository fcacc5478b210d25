-- Scenario 5: card search by an owner word AND an open expireDate range, sorted by
-- expireDate ascending, a page of 20: every owner first name crossed with five years.
package.path = (os.getenv("BENCH_LUA") or "bench/lua") .. "/?.lua;" .. package.path
local c = require("common")
setup, done = c.setup, c.done

function init(args)
  local paths = {}
  local years = { 2025, 2026, 2027, 2028, 2029 }
  for i, w in ipairs(c.lines("owners.txt")) do
    paths[#paths + 1] = c.owner_path(w, years[(i - 1) % #years + 1])
  end
  request = c.rotation(paths, id)
end
