-- cluster_hermite.lua: a Plummer star cluster integrated with the 4th-order
-- Hermite scheme and individual block time steps, the way collisional
-- codes (NBODY6++, phi-GPU) do: the energy error, the block statistics and
-- the Lagrangian radii over time.  On the GPU when there is one (the block
-- steps stay on it, and the force + jerk launch is tuned per number of
-- active stars: printed at the start).  The cluster is given physical
-- units: N stars of one solar mass, lengths in parsecs (so the time unit
-- follows from G = 1, and the snapshot OUT states the units for yt and
-- pynbody).  At the end a few single block steps show the active stars of
-- each.  It runs under
-- mpirun too (every rank keeps every body; each corrects the active stars
-- of its slice), printing on rank 0.
--   build/orrery run scripts/cluster_hermite.lua [N] [T_END] [ETA] [PRECISION] [OUT.hdf5]
--   mpirun -np 2 build/orrery run scripts/cluster_hermite.lua 1024 1 0.02 double
-- (PRECISION: double, or mixed: differences in double, the rest in float)
-- The same model timed as a benchmark (seconds per time unit, active bodies per
-- block, the fraction of the all-active rate; over ranks under mpirun too):
--   build/orrery bench --integrator hermite --run 0.5 --n 16384,32768 [--csv]
local orrery = require "orrery"
local print = orrery.rank == 0 and print or function() end
local MSUN_G = 1.988409870698051e33

local n = math.tointeger(tonumber(arg[1])) or 1024
local t_end = tonumber(arg[2]) or 1
local eta = tonumber(arg[3]) or 0.02
local precision = arg[4] or "double"
local out = arg[5]

local sim <close> = orrery.simulation{
  bodies = orrery.ic.plummer{ n = n, seed = 7 },
  precision = precision,
  softening = 4 / n,          -- a softening of the order of the closest-approach distance
  integrator = "hermite", dt_max = 1 / 16, eta = eta,
  units = { length = "pc", mass_g = n * MSUN_G },   -- one solar mass per star
}
print(("Plummer cluster: %d bodies, Hermite with block steps, eta %g, dt_max %g, %s on %s"):format(
  n, eta, sim.dt_max, sim.precision, sim.backend))
print(("units: 1 pc, %d Msun; so 1 time unit = %.4g Myr, 1 velocity unit = %.4g km/s"):format(
  n, sim.units.time_s / 3.15576e13, sim.units.velocity_cm_s / 1e5))
local h = sim.config.hermite   -- on the GPU: the force + jerk launch tuned per block size
if h then
  local parts = {}
  for _, b in ipairs(h) do parts[#parts + 1] = ("<=%d: tile %d, %d/SM"):format(b.active, b.tile, b.per_sm) end
  print(("force + jerk launches (%s), by active stars: %s"):format(h.source, table.concat(parts, "; ")))
end
-- "step s": the stepping alone (sim:run's own seconds); "wall s": with the
-- energies and the cluster's radii between the rows
print(("%8s %14s %11s %9s %12s %12s %9s %9s %8s %8s %8s %8s"):format("t", "E", "dE/E0", "blocks",
  "active/blk", "smallest dt", "step s", "wall s", "r_core", "r_10%", "r_50%", "r_90%"))
local e0 = sim:energy().total
local clock, stepping, last = orrery._clock(), 0, { blocks = 0, active = 0 }
while sim.time < t_end - 1e-12 do
  stepping = stepping + sim:run{ steps = 4 }.seconds   -- a quarter of a time unit: four intervals
  local e, b = sim:energy().total, sim.blocks
  local c = sim:cluster{ fractions = { 0.1, 0.5, 0.9 } }   -- Lagrangian radii, the core
  local nb = b.blocks - last.blocks
  print(("%8.4f %14.10f %11.3e %9d %12.1f %12.4g %9.2f %9.2f %8.4f %8.4f %8.4f %8.4f"):format(
    sim.time, e, (e - e0) / math.abs(e0), nb, nb > 0 and (b.active - last.active) / nb or 0,
    b.smallest_dt, stepping, orrery._clock() - clock, c.core_radius, c.lagrangian[1],
    c.lagrangian[2], c.lagrangian[3]))
  last = b
end
if out then print("wrote " .. sim:write(out)) end
-- then one block step at a time (sim:step()): each advances only the stars
-- whose next time is the earliest; between blocks the stars are at times
-- of their own, and the block that ends the interval synchronises them
print("the next block steps: time, active stars")
for _ = 1, 6 do
  local before = sim.blocks.active
  sim:step()
  print(("  t = %.12f  %5d%s"):format(sim.time, sim.blocks.active - before,
    sim.synchronized and "  (every star at this time)" or ""))
end
