-- lj_gas.lua: a Lennard-Jones gas (argon-like, reduced units sigma =
-- epsilon = m = 1) in a periodic box with the built-in lennard_jones law
-- (cut off at 2.5 sigma, energy-shifted), started on a simple cubic lattice
-- (each atom displaced by up to 5% of the spacing) with Maxwellian velocities; leapfrog with an energy log, then the
-- temperature T = 2 K / (3 N).
--   orrery run scripts/lj_gas.lua [CELLS_PER_SIDE] [STEPS]
local orrery = require "orrery"

local cells = math.tointeger(tonumber(arg[1])) or 12
local steps = math.tointeger(tonumber(arg[2])) or 1000
local n = cells * cells * cells
local density = 0.5
local L = (n / density) ^ (1 / 3)
local a = L / cells

local sim <close> = orrery.simulation{
  n = n, force = "lennard_jones", params = { epsilon = 1, sigma = 1, cutoff = 2.5 },
  box = { L, L, L }, softening = 0, dt = 2e-3, precision = "double",
}
math.randomseed(4242)   -- Lua's generator: the same run every time
local function gauss()   -- Box-Muller
  return math.sqrt(-2 * math.log(1 - math.random())) * math.cos(2 * math.pi * math.random())
end
local T0 = 1.2
local i = 0
for x = 0, cells - 1 do
  for y = 0, cells - 1 do
    for z = 0, cells - 1 do
      i = i + 1
      local j = function() return 0.05 * a * (2 * (gauss() % 1) - 1) end   -- off the lattice
      sim.pos:set(i, (x + 0.5) * a + j(), (y + 0.5) * a + j(), (z + 0.5) * a + j())
      sim.vel:set(i, math.sqrt(T0) * gauss(), math.sqrt(T0) * gauss(), math.sqrt(T0) * gauss())
      sim.mass[i] = 1
    end
  end
end
local p = sim:momentum()   -- remove the centre-of-mass drift
for j = 1, n do
  local vx, vy, vz = sim.vel:get(j)
  sim.vel:set(j, vx - p.x / n, vy - p.y / n, vz - p.z / n)
end
print(("Lennard-Jones gas: %d atoms, density %g, box %.3f, on %s"):format(n, density, L, sim.backend))
sim:run{ steps = steps, every = math.max(1, steps // 10) }
print(("temperature %.4f (started at %.2f)"):format(2 * sim:energy().kinetic / (3 * n), T0))
