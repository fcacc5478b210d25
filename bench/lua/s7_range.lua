-- Scenario 7: Pwned Passwords ranges, GET /range/{prefix} over a rotation of random
-- prefixes (BENCH_DATA/prefixes.txt, written by bench/ranges.py), at the root path.
package.path = (os.getenv("BENCH_LUA") or "bench/lua") .. "/?.lua;" .. package.path
local c = require("common")
setup, done = c.setup, c.done

function init(args)
  local paths = {}
  for i, p in ipairs(c.lines("prefixes.txt")) do paths[i] = "/range/" .. p end
  request = c.rotation(paths, id)
end
