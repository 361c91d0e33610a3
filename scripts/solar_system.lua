-- solar_system.lua: the Sun and eight planets for 100 years with yoshida4.
-- Units: AU, solar masses, time in years / 2 pi (G = 1).
--   orrery run scripts/solar_system.lua [YEARS] [STEPS_PER_YEAR]
local orrery = require "orrery"

local years = tonumber(arg[1]) or 100
local per_year = math.tointeger(tonumber(arg[2])) or 200
local year = 2 * math.pi
local names = { "Sun", "Mercury", "Venus", "Earth", "Mars", "Jupiter", "Saturn", "Uranus", "Neptune" }

local sim <close> = orrery.simulation{
  bodies = orrery.ic.solar_system{},
  precision = "double", softening = 0, integrator = "yoshida4",
  dt = year / per_year, backend = "cpu",
}
local function distances()
  local sun, d = sim:body(1), {}
  for i = 2, sim.n do
    local b = sim:body(i)
    d[i] = math.sqrt((b.x - sun.x) ^ 2 + (b.y - sun.y) ^ 2 + (b.z - sun.z) ^ 2)
  end
  return d
end

local e0 = sim:energy().total
local d0 = distances()
sim:step(math.floor(years * per_year + 0.5))
local d1 = distances()
print(("%g years in %d steps of %.4g yr; |dE/E0| = %.2e"):format(
  sim.time / year, sim.steps, sim.dt / year, math.abs((sim:energy().total - e0) / e0)))
print(("%-8s %12s %12s"):format("planet", "r0 [AU]", "r [AU]"))
for i = 2, sim.n do
  print(("%-8s %12.5f %12.5f"):format(names[i], d0[i], d1[i]))
end
