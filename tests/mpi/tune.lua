-- tune: over several ranks each rank tunes its own slice shape (its bodies
-- against all N), ranks of one slice bucket sharing one tuning; then
-- sim:tune, the same.  Each rank prints its configuration; rank 0 prints
-- every rank's as sim.config.ranks has it, and a short run log.
--   orrery run tests/mpi/tune.lua N
local orrery = require "orrery"
local n = math.tointeger(tonumber(arg[1])) or 700
local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = n, seed = 4 },
  backend = "cpu", tune = true, tune_budget = 0.2 }
local function line(k)
  return ("block %d unroll %d threads %d (%s)"):format(k.block, k.unroll, k.threads, k.source)
end
local function show(when)
  io.stdout:write(("%s %d: %s\n"):format(when, orrery.rank, line(sim.config)))
  if orrery.rank == 0 then
    for _, r in ipairs(sim.config.ranks) do
      io.stdout:write(("%s list %d: %d+%d %s\n"):format(when, r.rank, r.first, r.count, line(r)))
    end
  end
end
show("create")
sim:run{ steps = 2, every = 1 }
sim:tune{ budget = 0.2 }
show("retune")
