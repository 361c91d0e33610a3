-- galactic_orbits.lua: stars orbiting in the Milky Way, an external field.
-- The built-in field milky_way (galpy's MWPotential2014) in physical units
-- (kpc, Msun: its 8 kpc and 220 km/s follow them), beside the stars' own
-- gravity.  Three stars start at 8 kpc: on the circular orbit, on an
-- eccentric one, and on one tilted out of the disc; after T Gyr the script
-- prints each one's radius range and height, and the energy error.  Then a
-- field of one's own, written as a potential expression: a satellite whose
-- mass is a runtime param, grown between runs with no recompile.
--   orrery run scripts/galactic_orbits.lua [T_GYR] [STEPS_PER_MYR]
local orrery = require "orrery"

local t_gyr = tonumber(arg[1]) or 1
local per_myr = tonumber(arg[2]) or 1

local units = { length = "kpc", mass = "Msun" }
local check = orrery.field("milky_way"):check{}
print(("milky_way: field:check %s (acceleration %.1e, jerk %.1e of the potential's derivatives)")
  :format(check.ok and "ok" or check.message, check.accel.max_rel, check.jerk.max_rel))

-- the circular speed at 8 kpc, 220 km/s, in the simulation's velocity unit
local probe <close> = orrery.simulation{ n = 1, units = units, fields = { "milky_way" },
                                         backend = "cpu" }
local kms = 1e5 / probe.units.velocity_cm_s
local myr = 3.15576e13 / probe.units.time_s
local vc = 220 * kms

local sim <close> = orrery.simulation{
  units = units, fields = { "milky_way" }, precision = "double", integrator = "yoshida4",
  softening = 0.01, dt = myr / per_myr,
  bodies = {
    { x = 8, y = 0, z = 0, vx = 0, vy = vc, vz = 0, m = 1 },             -- circular
    { x = 8, y = 0, z = 0, vx = 0, vy = 0.7 * vc, vz = 0, m = 1 },       -- eccentric
    { x = 8, y = 0, z = 0, vx = 0, vy = 0.9 * vc, vz = 0.3 * vc, m = 1 }, -- tilted
  },
}
local names = { "circular", "eccentric", "tilted" }
local rmin, rmax, zmax = { 8, 8, 8 }, { 8, 8, 8 }, { 0, 0, 0 }
local e0 = sim:energy()
local steps = math.floor(t_gyr * 1000 * per_myr + 0.5)
for _ = 1, steps // 10 do
  sim:run{ steps = 10, progress = false }
  for i = 1, 3 do
    local b = sim:body(i)
    local r = math.sqrt(b.x ^ 2 + b.y ^ 2)
    rmin[i], rmax[i] = math.min(rmin[i], r), math.max(rmax[i], r)
    zmax[i] = math.max(zmax[i], math.abs(b.z))
  end
end
local e1 = sim:energy()
print(("%g Gyr in %d steps (%s): |dE/E0| = %.2e (the field's part of the potential: %.4f)")
  :format(sim.time / (1000 * myr), sim.steps, sim.backend,
          math.abs((e1.total - e0.total) / e0.total), e1.external / e1.potential))
for i = 1, 3 do
  print(("  %-9s R from %6.3f to %6.3f kpc, |z| up to %.3f kpc"):format(names[i], rmin[i],
    rmax[i], zmax[i]))
end

-- a field of one's own: a satellite of runtime mass M at (xs, 0, 0)
local satellite = orrery.field{
  name = "satellite", params = { M = 0, xs = 12, b = 0.5 }, runtime_params = { "M" },
  potential = "-G*M/sqrt((x - xs)^2 + y^2 + z^2 + b^2)",
}
local pert <close> = orrery.simulation{
  units = units, fields = { "milky_way", satellite }, precision = "double",
  integrator = "yoshida4", softening = 0.01, dt = myr / per_myr,
  bodies = { { x = 8, y = 0, z = 0, vx = 0, vy = vc, vz = 0, m = 1 } },
}
pert:run{ steps = 100 * per_myr, progress = false }
pert:set_param("satellite.M", 1e10)   -- runtime: no recompile
pert:run{ steps = 100 * per_myr, progress = false }
local b = pert:body(1)
print(("a 1e10 Msun satellite switched on after 100 Myr: the circular star at R = %.3f kpc "
  .. "after 200 Myr"):format(math.sqrt(b.x ^ 2 + b.y ^ 2)))
