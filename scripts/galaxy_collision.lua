-- galaxy_collision.lua: two Plummer spheres on a bound orbit merge.
-- Writes a snapshot (.txt) at the end; prints the energy log.
--   orrery run scripts/galaxy_collision.lua [N] [STEPS] [OUT.txt]
local orrery = require "orrery"

local n = math.tointeger(tonumber(arg[1])) or 4096
local steps = math.tointeger(tonumber(arg[2])) or 400
local out = arg[3]

local sim <close> = orrery.simulation{
  bodies = orrery.ic.galaxy_collision{ n = n, seed = 7, mass_ratio = 0.5,
                                       separation = 8, impact = 1.5, v_ratio = 0.6 },
  softening = 0.02, dt = 1 / 64,
}
print(("galaxy collision: %d bodies on %s, %d steps of %g"):format(sim.n, sim.backend, steps, sim.dt))
sim:run{ steps = steps, every = math.max(1, steps // 8) }
if out then
  sim:write(out)
  print("wrote " .. out)
end
