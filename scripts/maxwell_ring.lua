-- maxwell_ring.lua: Maxwell's ring, a central mass with K equal bodies on a
-- circle turning rigidly about it (each at the speed G (M + m S / 4) / r
-- asks, S the sum of 1 / sin(pi k / K)), with the Hermite integrator's
-- block steps.  The pulls on the central body cancel: its acceleration is
-- rounding noise, which the step criterion's noise floor ignores
-- (docs/LUA_API.md, "Block time steps"), so its steps stay long.  Prints
-- the ring's largest distance from the rigid rotation and the energy error.
--   orrery run scripts/maxwell_ring.lua [K] [TURNS] [BACKEND]
local orrery = require "orrery"
local K = math.tointeger(tonumber(arg[1])) or 6
local turns = tonumber(arg[2]) or 1
local M, m = 1, 1e-3
local S = 0
for k = 1, K - 1 do S = S + 1 / math.sin(math.pi * k / K) end
local v = math.sqrt(M + m * S / 4)   -- G = 1, r = 1: also the angular speed
local bodies = { { m = M } }
for k = 0, K - 1 do
  local th = 2 * math.pi * k / K
  bodies[#bodies + 1] = { m = m, x = math.cos(th), y = math.sin(th),
                          vx = -v * math.sin(th), vy = v * math.cos(th) }
end
local sim <close> = orrery.simulation{ bodies = bodies, integrator = "hermite", precision = "double",
  softening = 0, dt_max = 1 / 16, eta = 0.02, backend = arg[3] }
local e0 = sim:energy().total
sim:advance(turns * 2 * math.pi / v)
local worst = 0
for k = 0, K - 1 do
  local th = 2 * math.pi * k / K + v * sim.time
  local b = sim:body(k + 2)
  worst = math.max(worst, math.sqrt((b.x - math.cos(th)) ^ 2 + (b.y - math.sin(th)) ^ 2 + b.z ^ 2))
end
print(("Maxwell's ring of %d after %g turn(s) (t = %.4f): %d blocks, the ring within %.2e of the rigid rotation, |dE/E0| = %.2e"):format(
  K, turns, sim.time, sim.blocks.blocks, worst, math.abs((sim:energy().total - e0) / e0)))
