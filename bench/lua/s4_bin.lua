-- Scenario 4: card search number:<bin>*, a page of 20 with its count (totalElements), over
-- the shared BINs of the corpus (411111 alone holds ~18% of the cards).
package.path = (os.getenv("BENCH_LUA") or "bench/lua") .. "/?.lua;" .. package.path
local c = require("common")
setup, done = c.setup, c.done

function init(args)
  local paths = {}
  for i, b in ipairs(c.lines("bins.txt")) do paths[i] = c.bin_path(b) end
  request = c.rotation(paths, id)
end
