-- tools/energy-jumps.lua: where an unsoftened cluster loses its energy.
-- An equal-mass Plummer cluster of N bodies (seed SEED, softening 0, close
-- pairs and compact groups regularised, eta 0.01, dt_max 1/8) run to T (or
-- for WALL seconds), a line every EVERY time units: "L N SEED backend t
-- dE/E0 binaries hardest_kT E_bin/|E0| wall_s groups_formed"; then "S ..."
-- with the largest change of dE/E0 between two lines and where.  With
-- CKDIR each line's state is checkpointed there (CKDIR/tT.h5), and with
-- FROM the run goes on from such a checkpoint (dE/E0 still against the
-- fresh cluster's energy), to look at one stretch more closely
-- (docs/PERFORMANCE.md: N = 512 through core collapse, issue 29).
--   orrery run tools/energy-jumps.lua N SEED T EVERY WALL [auto|cpu|cuda] [CKDIR] [FROM]
local orrery = require "orrery"
local n, seed = math.tointeger(tonumber(arg[1])), math.tointeger(tonumber(arg[2]))
local T, every, wall = tonumber(arg[3]), tonumber(arg[4]), tonumber(arg[5])
if not (n and seed and T and every and wall and every > 0) then
  error("usage: orrery run tools/energy-jumps.lua N SEED T EVERY WALL [auto|cpu|cuda] [CKDIR] [FROM]")
end
local ckdir = arg[7] ~= "" and arg[7] or nil
local from = arg[8] ~= "" and arg[8] or nil
local sim = orrery.simulation{ bodies = orrery.ic.plummer{ n = n, seed = seed },
  precision = "double", softening = 0, regularize = true, integrator = "hermite",
  dt_max = 1 / 8, eta = 0.01, backend = arg[6] or "auto" }
local e0 = sim:energy().total
if from then sim:close(); sim = orrery.restore(from, { backend = arg[6] or "auto" }) end
local clock = orrery._clock()
local prev = (sim:energy().total - e0) / math.abs(e0)
local worst, at = 0, sim.time
while sim.time < T - 1e-9 and orrery._clock() - clock < wall do
  sim:run{ ["until"] = math.min(T, sim.time + every), max_energy_error = 1e-2 }
  local e = (sim:energy().total - e0) / math.abs(e0)
  local b = sim:binaries()
  if math.abs(e - prev) > worst then worst, at = math.abs(e - prev), sim.time end
  print(("L %d %d %s %8.3f %11.3e %3d %8.1f %9.3g %7.1f %d"):format(n, seed, sim.backend,
    sim.time, e, b.count, b.count > 0 and b[1].kT or 0, b.energy / math.abs(e0),
    orrery._clock() - clock, sim.blocks.formed))
  io.stdout:flush()
  if ckdir then sim:checkpoint(("%s/t%.3f.h5"):format(ckdir, sim.time)) end
  prev = e
end
print(("S %d %d %s t %.2f dE %.3e worstjump %.3e at %.2f blocks %d formed %d wall %.1f"):format(
  n, seed, sim.backend, sim.time, prev, worst, at, sim.blocks.blocks, sim.blocks.formed,
  orrery._clock() - clock))
sim:close()
