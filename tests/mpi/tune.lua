-- tune: over several ranks rank 0 tunes and every rank runs its choice
-- (then sim:tune, the same); each rank prints its configuration.
local orrery = require "orrery"
local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 700, seed = 4 },
  backend = "cpu", tune = true, tune_budget = 0.3 }
local function show(when)
  local k = sim.config
  io.stdout:write(("%s %d: block %d unroll %d threads %d (%s)\n"):format(when, orrery.rank,
    k.block, k.unroll, k.threads, k.source))
end
show("create")
sim:step(2)
sim:tune{ budget = 0.3 }
show("retune")
