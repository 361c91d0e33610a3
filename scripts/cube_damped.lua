-- cube_damped.lua: the course-project scenario: bodies at rest in a random
-- 3D cube, semi-implicit Euler with velocity damping 0.95 per step
-- (v += a dt; v *= 0.95; x += v dt), so the cloud settles instead of bouncing.
--   orrery run scripts/cube_damped.lua [N] [STEPS]
local orrery = require "orrery"

local n = math.tointeger(tonumber(arg[1])) or 2048
local steps = math.tointeger(tonumber(arg[2])) or 300

local sim <close> = orrery.simulation{
  bodies = orrery.ic.uniform_cube{ n = n, seed = 3, side = 2 },
  integrator = "euler", damping = 0.95, softening = 0.05, dt = 0.01,
}
print(("damped cube: %d bodies, euler with damping %.2f on %s"):format(sim.n, 0.95, sim.backend))
sim:run{ steps = steps, every = math.max(1, steps // 6) }
local com, vcom = sim:center_of_mass()
print(("centre of mass (%.2e, %.2e, %.2e); kinetic energy %.4e"):format(
  com.x, com.y, com.z, sim:energy().kinetic))
