-- startup: the start-up measurement of docs/PERFORMANCE.md: a script that
-- only creates (and closes) a 4096-body simulation.  Time the whole
-- process, and see where its time goes with ORRERY_TRACE=1:
--   ORRERY_TRACE=1 build/orrery run tools/startup.lua [cuda|cpu] [notune]
local orrery = require "orrery"
local sim <close> = orrery.simulation{ n = 4096, backend = arg[1] or "cuda", tune = arg[2] ~= "notune" }
