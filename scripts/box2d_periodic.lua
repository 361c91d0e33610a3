-- box2d_periodic.lua: the shared-memory tutorial scenario: 4096 bodies at
-- rest in a 2D periodic unit box (minimum-image forces, positions wrapped),
-- semi-implicit Euler with dt = 1e-4; prints body 1's trajectory.
--   orrery run scripts/box2d_periodic.lua [N] [STEPS] [EVERY]
local orrery = require "orrery"

local n = math.tointeger(tonumber(arg[1])) or 4096
local steps = math.tointeger(tonumber(arg[2])) or 1000
local every = math.tointeger(tonumber(arg[3])) or 100

local sim <close> = orrery.simulation{
  bodies = orrery.ic.random_box_2d{ n = n, seed = 1 },
  dims = 2, box = { 1, 1 }, integrator = "euler", dt = 1e-4, softening = 1e-3,
}
print(("2D periodic box: %d bodies on %s, %d Euler steps of %g"):format(sim.n, sim.backend, steps, sim.dt))
print(("%8s %10s %12s %12s"):format("step", "t", "x1", "y1"))
for s = 0, steps, every do
  if s > 0 then sim:step(every) end
  local x, y = sim.pos:get(1)
  print(("%8d %10.4f %12.8f %12.8f"):format(sim.steps, sim.time, x, y))
end
