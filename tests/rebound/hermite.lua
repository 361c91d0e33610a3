-- hermite.lua: the bodies of tests/test_rebound.py (one per line: m x y z
-- vx vy vz) integrated with orrery's Hermite integrator to time T; the
-- final state to OUT, %.17g.
--   orrery run tests/rebound/hermite.lua IN OUT T ETA SOFTENING BACKEND
local orrery = require "orrery"
local input, out, t_end, eta, eps, backend = arg[1], arg[2], tonumber(arg[3]), tonumber(arg[4]),
  tonumber(arg[5]), arg[6] or "cpu"
local bodies = {}
for line in io.lines(input) do
  local v = {}
  for w in line:gmatch("%S+") do v[#v + 1] = tonumber(w) end
  bodies[#bodies + 1] = { m = v[1], x = v[2], y = v[3], z = v[4], vx = v[5], vy = v[6], vz = v[7] }
end
local sim <close> = orrery.simulation{ n = #bodies, backend = backend, precision = "double",
  integrator = "hermite", dt_max = 1 / 16, eta = eta, eta_start = eta / 2, softening = eps }
sim:set_bodies(bodies)
sim:run{ ["until"] = t_end }
local f <close> = assert(io.open(out, "w"))
for i = 1, sim.n do
  local b = sim:body(i)
  f:write(("%.17g %.17g %.17g %.17g %.17g %.17g\n"):format(b.x, b.y, b.z, b.vx, b.vy, b.vz))
end
print(("blocks %d, mean active %.2f"):format(sim.blocks.blocks, sim.blocks.mean_active))
