-- Scenario 3: the whole breach catalog.
package.path = (os.getenv("BENCH_LUA") or "bench/lua") .. "/?.lua;" .. package.path
local c = require("common")
setup, done = c.setup, c.done

function init(args)
  request = c.rotation({ c.catalog_path() }, id)
end
