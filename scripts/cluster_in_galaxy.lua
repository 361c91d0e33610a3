-- cluster_in_galaxy.lua: a star cluster on an orbit in the Milky Way
-- (milky_way, galpy's MWPotential2014), losing stars into tidal tails.
-- The cluster starts at 8 kpc from the centre on a slightly eccentric orbit
-- in the disc; it is a Plummer sphere that fills its tidal radius, so its
-- outer stars leave through the Lagrange points and trail it along the
-- orbit.  The bodies live in a frame that follows the cluster (frame =
-- {center =, velocity =}): their positions are relative to a centre whose
-- orbit the frame integrates in double, and the fields add the tidal
-- acceleration a(R + x) - a(R) in double, so float kernels keep the
-- cluster's parsec-scale structure (absolute float positions at 8 kpc are
-- 0.5 mpc apart, and their forces lose more: FORCE_LAWS.md, "A frame").
--   orrery run scripts/cluster_in_galaxy.lua [N] [T_MYR] [FRAMES_DIR]
-- N stars (4096), T_MYR million years (400); with FRAMES_DIR a PNG frame
-- of the cluster and its tails (in the frame, x towards the galaxy's
-- outside at the start, 2 kpc across) every 4 Myr.  Prints every 20 Myr:
-- the time, the centre's galactocentric radius, the stars within the
-- tidal radius of the cluster's densest part, those beyond twice it (the
-- tails), and the galaxy's energy error.
local orrery = require "orrery"

local n = math.tointeger(tonumber(arg[1] or 4096))
local t_myr = tonumber(arg[2]) or 400
local frames = arg[3]
assert(n and n >= 16, "N must be an integer of at least 16")

local units = { length = "pc", mass = "Msun" }
local probe <close> = orrery.simulation{ n = 1, units = units, fields = { "milky_way" },
                                         backend = "cpu" }
local kms = 1e5 / probe.units.velocity_cm_s
local myr = 3.15576e13 / probe.units.time_s
probe:close()

-- the cluster: 2e4 Msun, virial radius 12 pc; its tidal (Jacobi) radius at
-- 8 kpc, (G M / (4 - beta^2) / Omega^2)^(1/3) for a flat rotation curve
-- (beta^2 = 2: kappa^2 = 2 Omega^2), is about 35 pc
local mass, rv = 2e4, 12
local R0, vc = 8000, 220 * kms
local omega = vc / R0
local rt = (mass / (2 * omega ^ 2)) ^ (1 / 3)   -- G = 1 in these units
local sim <close> = orrery.simulation{
  bodies = orrery.ic.plummer{ n = n, seed = 12, mass = mass, radius = rv },
  units = units, fields = { "milky_way" }, precision = "float", integrator = "leapfrog",
  softening = 0.3, dt = 0.05 * myr,
  frame = { center = { R0, 0, 20 }, velocity = { 0, 0.95 * vc, 3 * kms } },
}
print(("cluster_in_galaxy: %d stars, %.0f Msun, virial radius %.0f pc, tidal radius %.1f pc, "
  .. "on %s; %g Myr"):format(n, mass, rv, rt, sim.backend, t_myr))
print("  t/Myr   R/kpc  in r_t  beyond 2 r_t     dE/E0")

-- the densest part: the mass-weighted centre of the stars near the last one
local function census()
  local pos = sim.pos:to_table()
  local cx, cy, cz = 0, 0, 0
  for pass = 1, 3 do
    local sx, sy, sz, c = 0, 0, 0, 0
    local r = pass == 1 and 1e30 or 2 * rt / pass
    for i = 0, n - 1 do
      local x, y, z = pos[3 * i + 1], pos[3 * i + 2], pos[3 * i + 3]
      if (x - cx) ^ 2 + (y - cy) ^ 2 + (z - cz) ^ 2 < r * r then
        sx, sy, sz, c = sx + x, sy + y, sz + z, c + 1
      end
    end
    if c > 0 then cx, cy, cz = sx / c, sy / c, sz / c end
  end
  local inside, tails = 0, 0
  for i = 0, n - 1 do
    local d2 = (pos[3 * i + 1] - cx) ^ 2 + (pos[3 * i + 2] - cy) ^ 2 + (pos[3 * i + 3] - cz) ^ 2
    if d2 < rt * rt then inside = inside + 1 elseif d2 > 4 * rt * rt then tails = tails + 1 end
  end
  return inside, tails
end

local e0 = sim:energy().total
local per_print, per_frame = math.floor(20 / 0.05 + 0.5), math.floor(4 / 0.05 + 0.5)
local steps = math.floor(t_myr / 0.05 + 0.5)
local function report()
  local c = sim.frame.center
  local inside, tails = census()
  print(("%7.1f %7.3f %7d %13d %9.2e"):format(sim.time / myr,
    math.sqrt(c[1] ^ 2 + c[2] ^ 2 + c[3] ^ 2) / 1000, inside, tails,
    (sim:energy().total - e0) / math.abs(e0)))
end
local function frame()
  if frames then
    sim:render{ path = frames .. "/cluster_%04d.png", width = 800, height = 800, axis = "xy",
                extent = { -1000, 1000, -1000, 1000 } }
  end
end
report()
frame()
local stepping = 0
while sim.steps < steps do
  local k = math.min(per_frame, steps - sim.steps)
  stepping = stepping + sim:run{ steps = k, progress = false }.seconds
  frame()
  if sim.steps % per_print == 0 or sim.steps == steps then report() end
end
sim:flush()
print(("%g Myr in %d steps: %.2f s of stepping on %s"):format(sim.time / myr, sim.steps,
  stepping, sim.backend))
