-- plummer.lua: the main job. A Plummer sphere in virial equilibrium (Henon
-- units: G = M = 1, E = -1/4) integrated with leapfrog, with an energy log
-- and a final summary. Runs on the GPU when there is one, else on the CPU.
--   orrery run scripts/plummer.lua [N] [STEPS] [PRECISION]
local orrery = require "orrery"

local n = math.tointeger(tonumber(arg[1])) or 4096
local steps = math.tointeger(tonumber(arg[2])) or 500
local precision = arg[3] or "float"

local sim <close> = orrery.simulation{
  bodies = orrery.ic.plummer{ n = n, seed = 42 },
  precision = precision,
  softening = 0.01,
  dt = 1 / 512,
}
print(("Plummer sphere: %d bodies, %s on %s, dt = %g, %d steps"):format(
  sim.n, sim.precision, sim.backend, sim.dt, steps))

local e0 = sim:energy().total
local run = sim:run{ steps = steps, every = math.max(1, steps // 10) }
local e = sim:energy()
print(("t = %.4f after %d steps: E = %.8f, |dE/E0| = %.2e, virial ratio K/|U| = %.4f"):format(
  sim.time, sim.steps, e.total, math.abs((e.total - e0) / e0), sim:virial_ratio()))
local k = sim.config
print(("%.3g interactions/s over the run (%.2f s); kernels: block %d, unroll %d, split %d, ipt %d%s, ranges %d (%s)"):format(
  sim.n * sim.n * steps / run.seconds, run.seconds, k.block, k.unroll, k.split, k.ipt,
  k.prefetch == 1 and " prefetch" or "", k.ranges, k.source))
