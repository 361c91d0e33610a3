-- tests/galpy/orbit.lua: one orbit in the built-in field milky_way
-- (galpy's MWPotential2014), for tests/test_galpy.py.  Lengths in kpc,
-- masses in Msun, and G chosen so that the velocity unit is 1 km/s (the
-- time unit is then 1 kpc / (km/s) = 0.9778 Gyr): milky_way's ro and vo
-- follow from the units.
--   orrery run orbit.lua G T DT INTEGRATOR x y z vx vy vz [frame]
-- prints the state at the start and at T, with the energy per unit mass
-- and its external (field) part, one line each.  With "frame" the state is
-- a frame's centre (frame = {center =, velocity =}, its orbit integrated
-- by the frame itself) with the body at rest at it.
local orrery = require "orrery"
local G, T, dt = tonumber(arg[1]), tonumber(arg[2]), tonumber(arg[3])
local integrator = arg[4]
local b = { x = tonumber(arg[5]), y = tonumber(arg[6]), z = tonumber(arg[7]),
            vx = tonumber(arg[8]), vy = tonumber(arg[9]), vz = tonumber(arg[10]), m = 1 }
local opts = { n = 1, precision = "double", G = G, softening = 0, backend = "cpu",
               units = { length = "kpc", mass = "Msun" }, fields = { "milky_way" },
               integrator = integrator }
if integrator == "hermite" then opts.dt_max, opts.eta = dt, 0.002 else opts.dt = dt end
local frame = arg[11] == "frame"
if frame then
  opts.frame = { center = { b.x, b.y, b.z }, velocity = { b.vx, b.vy, b.vz } }
  b = { m = 1 }
end
local sim <close> = orrery.simulation(opts)
sim:set_body(1, b)
local function show(tag)
  local p, e = sim:body(1), sim:energy()
  if frame then   -- the centre plus the body (at rest at it)
    local F = sim.frame
    p = { x = F.center[1] + p.x, y = F.center[2] + p.y, z = F.center[3] + p.z,
          vx = F.velocity[1] + p.vx, vy = F.velocity[2] + p.vy, vz = F.velocity[3] + p.vz }
  end
  print(("%s %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g"):format(tag, p.x, p.y, p.z,
    p.vx, p.vy, p.vz, e.total, e.external))
end
show("start")
sim:advance(T)
show("end")
print(("params ro %.17g vo %.17g"):format(sim:param("milky_way.ro"), sim:param("milky_way.vo")))
