-- plasma_coulomb.lua: a neutral two-component plasma in a periodic box with
-- the built-in coulomb law (charge attribute; like charges repel): heavy
-- ions (charge +1, mass 1) and light electrons (charge -1, mass 0.05), all
-- with thermal velocities.  Forces use the minimum image (no Ewald sum), and
-- the Plummer softening keeps close electron-ion encounters finite.  The
-- minimum-image Coulomb force jumps where a pair is half a box apart; in
-- double precision rounding decides that jump for no pair in practice (in
-- float, for a few pairs per million), so the run is in double and
-- `orrery run --verify` checks it to 1e-12.
--   orrery run scripts/plasma_coulomb.lua [N] [STEPS]
local orrery = require "orrery"

local n = math.tointeger(tonumber(arg[1])) or 4096
local steps = math.tointeger(tonumber(arg[2])) or 500
local L = 16.0

local bodies = orrery.ic.uniform_cube{ n = n, seed = 21, side = L }
local sim <close> = orrery.simulation{
  bodies = bodies, force = "coulomb", params = { k = 1.0 }, box = { L, L, L },
  softening = 0.1, dt = 1e-3, integrator = "leapfrog", precision = "double",
}
-- uniform_cube is centred on the origin; the box is [0, L): shift (wrapping does the rest)
math.randomseed(12345)   -- Lua's generator: the same run every time
local function gauss()   -- Box-Muller
  return math.sqrt(-2 * math.log(1 - math.random())) * math.cos(2 * math.pi * math.random())
end
local T = 0.5   -- temperature, k_B = 1
for i = 1, n do
  local ion = i % 2 == 1
  local m = ion and 1.0 or 0.05
  local s = math.sqrt(T / m)
  local x, y, z = sim.pos:get(i)
  sim.pos:set(i, x + L / 2, y + L / 2, z + L / 2)
  sim.vel:set(i, s * gauss(), s * gauss(), s * gauss())
  sim.mass[i] = m
  sim:set_attribute("charge", i, ion and 1 or -1)
end
local p, mtot = sim:momentum(), n / 2 * 1.05   -- remove the centre-of-mass drift
for i = 1, n do
  local vx, vy, vz = sim.vel:get(i)
  sim.vel:set(i, vx - p.x / mtot, vy - p.y / mtot, vz - p.z / mtot)
end
print(("neutral plasma: %d bodies (half ions, half electrons) in a periodic box of %g on %s"):format(
  sim.n, L, sim.backend))
sim:run{ steps = steps, every = math.max(1, steps // 10) }
