-- cold_collapse.lua: a uniform sphere at rest collapses under its own
-- gravity (free-fall time pi/2 sqrt(R^3 / 2GM) = 1.11 in G = M = R = 1)
-- and bounces back towards virial equilibrium; the virial ratio K/|U| goes
-- from 0 through its peak at collapse towards 0.5.
--   orrery run scripts/cold_collapse.lua [N] [STEPS]
local orrery = require "orrery"

local n = math.tointeger(tonumber(arg[1])) or 2048
local steps = math.tointeger(tonumber(arg[2])) or 400

local sim <close> = orrery.simulation{
  bodies = orrery.ic.cold_collapse{ n = n, seed = 11, virial = 0.05 },
  softening = 0.05, dt = 1 / 128,
}
print(("cold collapse: %d bodies on %s, t_ff = %.3f"):format(sim.n, sim.backend, math.pi / 2 / math.sqrt(2)))
sim:run{ steps = steps, every = math.max(1, steps // 10) }
