-- kepler.lua: one Kepler orbit in double precision with leapfrog; after one
-- period the pair is back where it started.  sim:advance(t) integrates to
-- the time t (steps of dt, the last one shortened to land on t).
--   orrery run scripts/kepler.lua [ECCENTRICITY] [STEPS_PER_ORBIT]
local orrery = require "orrery"

local e = tonumber(arg[1]) or 0.5
local per_orbit = math.tointeger(tonumber(arg[2])) or 20000
local m1, m2, a = 1.0, 1e-3, 1.0
local period = 2 * math.pi * math.sqrt(a ^ 3 / (m1 + m2))

local sim <close> = orrery.simulation{
  bodies = orrery.ic.kepler{ m1 = m1, m2 = m2, a = a, e = e },
  precision = "double", softening = 0, dt = period / per_orbit, backend = "cpu",
}
local start = sim:body(2)
local e0 = sim:energy().total
sim:advance(period)
local b = sim:body(2)
local miss = math.sqrt((b.x - start.x) ^ 2 + (b.y - start.y) ^ 2 + (b.z - start.z) ^ 2)
print(("e = %.2f, one period (T = %.6f) in %d steps: position error %.3e a, |dE/E0| = %.3e"):format(
  e, period, sim.steps, miss / a, math.abs((sim:energy().total - e0) / e0)))
