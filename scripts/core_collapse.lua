-- core_collapse.lua: an equal-mass Plummer cluster run to core collapse
-- with the Hermite integrator and block time steps.  Two-body relaxation
-- drives the core inwards until it collapses (the gravothermal
-- catastrophe), a few hundred to a few thousand time units; the literature
-- puts equal-mass core collapse at 12-19 initial half-mass relaxation times
-- (Quinlan 1996; 15.5 t_rh in Fokker-Planck models).  Every `every` time
-- units the script prints the core radius, the core density and a few
-- Lagrangian radii; it stops once the core radius has fallen to a tenth of
-- its initial value and risen again by half (the bounce of the first
-- binaries' heating: without softening, with a regularised binary of 10 kT
-- or more; one line's core radius is noisy, and an N = 4096 run's 0.014
-- between two of 0.03, 60 time units before its collapse and with no hard
-- binary, was taken for the bounce before), and prints the time of the
-- smallest core radius, t_cc, in units of the initial t_rh; or at T_MAX,
-- saying that the core has not collapsed yet and where it was smallest.
-- After the collapse it goes on to ON_TO t_cc (1.5; 1 stops at the bounce).  The cluster has no
-- softening: close pairs and compact groups are regularised (regularize =
-- true: they leave the block steps for algorithmic regularisation, so hard
-- binaries cost little), and each line gives the regularised binaries, the
-- hardest one's binding energy in kT, their binding energy summed as a
-- fraction of |E| (the energy error counts it), the escapers and the
-- groups formed since the line before (sim.blocks.formed; in a collapsing
-- N = 4096 core 60 a time unit, most soon apart, 250 before encounters
-- were left to the block steps down to a pericentre of 0.05 r_close).  A long
-- run can go in parts:
-- with CHECKPOINT (a path ending in .h5 or .hdf5) the state is
-- checkpointed there every EVERY time units (the smallest core so far
-- beside it, in CHECKPOINT.best), and a later run with the same arguments
-- goes on from it (another N, PRECISION, SOFTENING, or ENCOUNTER or ETA
-- where given, is refused by name; a checkpoint without its .best is gone
-- on from too, never overwritten).  How long it takes
-- (docs/PERFORMANCE.md): N = 2048 collapsed at 14.7 t_rh in 2 minutes on
-- an H100; on one CPU core N = 1024 at 12.5 t_rh in 3 minutes and N = 2048
-- at 14.0 t_rh in about 24; N = 4096 on the H100 collapsed at 16.2 t_rh
-- after about 19 minutes (in parts; 13 of them to 16 t_rh), and then took
-- 30 to 50 s a time unit (the collapsed core's close pairs and groups).
-- With SOFTENING > 0 the run is the softened one of earlier releases
-- (softening 1e-4, eta 0.02, no regularisation: every block on the GPU's
-- own block loop), for comparison.  ENCOUNTER (regularize.encounter,
-- default 0.05) is how close, as a fraction of r_close, an unbound
-- encounter must come to be regularised (docs/LUA_API.md).  ETA is the
-- block steps' accuracy parameter (default 0.01 without softening, 0.02
-- with it; at most 1).  EVERY is at least T_MAX / 1e6.
--   build/orrery run scripts/core_collapse.lua [N] [T_MAX] [EVERY] [PRECISION] [CHECKPOINT] [ON_TO] [SOFTENING] [ENCOUNTER] [ETA]
local orrery = require "orrery"

-- argument i as a number (default where not given), refused by name where
-- it is not one or ok(v) fails
local function number(i, name, default, ok, what)
  if arg[i] == nil then return default end
  local v = tonumber(arg[i])
  if not v or v ~= v or not ok(v) then
    error(("%s (argument %d) must be %s, got %s"):format(name, i, what, arg[i]))
  end
  return v
end
local n = number(1, "N", 4096, function(v) return math.tointeger(v) and v > 0 end,
  "a whole number of bodies")
n = math.tointeger(n)
local t_max = number(2, "T_MAX", 4000, function(v) return v > 0 end, "a positive time")
local every = number(3, "EVERY", 10, function(v) return v > 0 and v < math.huge end,
  "a positive finite time")
if every < t_max / 1e6 then   -- a line each EVERY: a million at most
  error(("EVERY (argument 3) must be at least T_MAX / 1e6 (%g), got %s"):format(t_max / 1e6, arg[3]))
end
local precision = arg[4] or "double"
local ckpt = arg[5] ~= "" and arg[5] or nil
if ckpt and not (ckpt:match("%.h5$") or ckpt:match("%.hdf5$")) then
  error("CHECKPOINT (argument 5) must end in .h5 or .hdf5, got " .. ckpt)
end
local on_to = number(6, "ON_TO", 1.5, function(v) return v > 0 end, "a positive factor of t_cc")
local soft = number(7, "SOFTENING", 0, function(v) return v >= 0 and v < math.huge end,
  "0 or more")
local encounter = number(8, "ENCOUNTER", nil, function() return true end, "a number")
-- eta 0.01 without softening: the close encounters the block steps follow
-- cost energy as eta^2 (N = 128 to t = 50: |dE/E0| 3.4e-5 at 0.02, 3.1e-6
-- at 0.01); 0.02 with it
local eta = number(9, "ETA", soft == 0 and 0.01 or 0.02, function(v) return v > 0 end,
  "a positive number")
if eta > 1 then error("ETA (argument 9) must be at most 1, got " .. arg[9]) end

local function fresh()
  return orrery.simulation{
    bodies = orrery.ic.plummer{ n = n, seed = 1996 },
    precision = precision,
    softening = soft,   -- hard binaries regularised where there is none
    regularize = soft == 0 and { encounter = encounter },
    integrator = "hermite", dt_max = 1 / 8, eta = eta,
  }
end
local first = fresh()
local c0, e0 = first:cluster(), first:energy().total   -- the initial cluster, also when resumed
local best = { r = math.huge, t = 0, rho = 0, bounced = 0 }
-- a checkpoint there is gone on from (never overwritten by a fresh run),
-- with the smallest core so far from its .best where there is one
local found = ckpt and io.open(ckpt, "rb")
if found then found:close() end
local saved = ckpt and io.open(ckpt .. ".best")
local sim <close> = (found or saved) and orrery.restore(ckpt) or first
if found or saved then
  first:close()
  -- the run it goes on is the one these arguments describe (its initial
  -- cluster, energy and collapse rule come from them)
  local function same(what, i, mine, theirs)
    if mine ~= theirs then
      error(("%s (argument %d) is %s, but %s was started with %s: give the arguments it "
        .. "was started with"):format(what, i, tostring(mine), ckpt, tostring(theirs)))
    end
  end
  same("N", 1, n, sim.n)
  same("PRECISION", 4, precision, sim.precision)
  same("SOFTENING", 7, soft, sim.softening)
  if arg[8] then same("ENCOUNTER", 8, encounter, sim.regularize and sim.regularize.encounter) end
  if arg[9] then same("ETA", 9, eta, sim.eta) end
  if saved then
    local r, t, rho, bounced = saved:read("n", "n", "n", "n")
    saved:close()
    if not (r and t and rho) then
      error(("%s.best: expected the smallest core's radius, time and density (and 1 once "
        .. "bounced), as this script writes them; remove it to start the record anew"):format(ckpt))
    end
    best = { r = r, t = t, rho = rho, bounced = bounced or 0 }
  end
  print(("resumed from %s at t = %.2f%s"):format(ckpt, sim.time,
    saved and "" or " (no .best beside it: the smallest core from here on)"))
end
print(("core collapse: %d equal-mass bodies, %s on %s, eta %g; initial r_h %.4f, t_rh %.2f, r_core %.4f")
  :format(n, sim.precision, sim.backend, sim.eta, c0.r_half, c0.t_rh, c0.core_radius))
print(("%9s %7s %9s %11s %8s %8s %8s %11s %5s %8s %9s %5s %7s %9s"):format("t", "t/t_rh",
  "r_core", "rho_core", "r_1%", "r_10%", "r_50%", "dE/E0", "bins", "max kT", "E_bin/|E|", "esc",
  "formed", "wall s"))
local clock = orrery._clock()
local formed_before = sim.blocks.formed
local bounced = best.bounced > 0
local stop = bounced and math.min(t_max, on_to * best.t) or t_max
while sim.time < stop - 1e-9 do
  -- a run whose energy drifts by a percent is no longer to be trusted: stop
  if sim.time + every <= sim.time then
    error(("EVERY (argument 3) must be more than t = %.17g's rounding, got %s"):format(sim.time,
      tostring(every)))
  end
  sim:run{ ["until"] = math.min(stop, sim.time + every), max_energy_error = 1e-2 }
  local c = sim:cluster{ fractions = { 0.01, 0.1, 0.5 } }
  local e = sim:energy().total
  local bins = sim:binaries()
  local formed = sim.blocks.formed
  print(("%9.2f %7.3f %9.5f %11.4g %8.4f %8.4f %8.4f %11.3e %5d %8.1f %9.3g %5d %7d %9.1f"):format(
    sim.time, sim.time / c0.t_rh, c.core_radius, c.core_density, c.lagrangian[1],
    c.lagrangian[2], c.lagrangian[3], (e - e0) / math.abs(e0), bins.count,
    bins.count > 0 and bins[1].kT or 0, bins.energy / math.abs(e), c.escapers,
    formed - formed_before, orrery._clock() - clock))
  formed_before = formed
  io.stdout:flush()
  if not bounced and c.core_radius < best.r then
    best = { r = c.core_radius, t = sim.time, rho = c.core_density, bounced = 0 }
  end
  -- collapsed and bounced: the smallest core well below the start, and 50%
  -- above it now, with a hard binary to heat it where binaries are
  -- regularised; then on to on_to t_cc
  local heated = soft > 0 or (bins.count > 0 and bins[1].kT >= 10)
  if not bounced and best.r < 0.1 * c0.core_radius and c.core_radius > 1.5 * best.r and heated then
    bounced, best.bounced = true, 1
    print(("core collapse at t = %.2f (%.2f t_rh); on to %.2f t_cc"):format(best.t,
      best.t / c0.t_rh, on_to))
    stop = math.min(t_max, on_to * best.t)
  end
  if ckpt then
    sim:checkpoint(ckpt)
    local f = assert(io.open(ckpt .. ".best", "w"))
    f:write(("%.17g %.17g %.17g %d\n"):format(best.r, best.t, best.rho, best.bounced))
    f:close()
  end
end
local what = ("smallest core radius %.5f (%.3g of the initial), core density %.4g, after %.1f s")
  :format(best.r, best.r / c0.core_radius, best.rho, orrery._clock() - clock)
if bounced then
  print(("t_cc = %.2f (%.2f t_rh): %s"):format(best.t, best.t / c0.t_rh, what))
else   -- no bounce yet: the smallest core so far is not a collapse time
  print(("no core collapse by t = %.2f (%.2f t_rh); at t = %.2f (%.2f t_rh) the %s"):format(
    sim.time, sim.time / c0.t_rh, best.t, best.t / c0.t_rh, what))
end
