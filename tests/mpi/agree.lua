-- agree: what a rank sets or reads for itself must be the same on every
-- rank before any rank acts on it (issue 24 item 13): a restore of
-- different checkpoints, params, eta, dt_min and units at creation, dt,
-- a param and the steps asked changed on one rank after it (a bad
-- argument on one rank, a run's options), and the path of a file rank 0
-- writes for every rank.  Each case runs inside pcall:
-- every rank must come back with the same error (one message naming the
-- ranks), and then go on in step (a step after each case is collective).
-- Writes "RANK: CASE: ok|error MESSAGE" per case, then "RANK: done E", to
-- agree_RANK.out (a rank's own file: long lines on stdout, forwarded by
-- mpirun, may come cut into pieces between another rank's).
-- arg[1] == "make" writes the checkpoints the restore cases read (every
-- rank together); arg[1] == "close" closes simulations while an error
-- unwinds (on every rank, a background frame failed; on rank 1 alone, with
-- <close>, by the collector, after a flush); arg[1] == "resumed" only
-- says the resumed simulation's clock (orrery run --resume).
local orrery = require "orrery"
local me = orrery.rank
local out
local function say(fmt, ...)
  out = out or assert(io.open(("agree_%d.out"):format(me), "w"))
  out:write(fmt:format(...), "\n")
  out:flush()
end

local function plummer(seed)
  return orrery.simulation{ bodies = orrery.ic.plummer{ n = 64, seed = seed }, backend = "cpu",
    dt = 0.01 }
end

if arg[1] == "make" then   -- ck_3.hdf5, ck_5.hdf5 (one run at steps 3 and 5), ck_3b.hdf5
  do                       -- (another run, also at step 3); the hermite pair likewise
    local sim <close> = plummer(1)
    sim:step(3); sim:checkpoint("ck_3.hdf5")
    sim:step(2); sim:checkpoint("ck_5.hdf5")
    local other <close> = plummer(2)
    other:step(3); other:checkpoint("ck_3b.hdf5")
  end
  for seed, path in pairs{ [1] = "ck_h.hdf5", [2] = "ck_hb.hdf5" } do
    local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 64, seed = seed },
      backend = "cpu", precision = "double", integrator = "hermite", dt_max = 1 / 16 }
    sim:run{ steps = 2 }; sim:checkpoint(path)
  end
  return
end

if arg[1] == "resumed" then
  say("%d: resumed at t = %.17g, step %d", me, orrery.resumed.time, orrery.resumed.steps)
  return
end

if arg[1] == "close" then
  local sim <close> = plummer(1)
  -- an error on every rank leaves a simulation whose frame failed on rank
  -- 0 (a path under /proc): the error goes on, not the frame's
  local ok, msg = pcall(function()
    local s <close> = plummer(1)
    s:render("/proc/nope/f.png")
    s:step(1)
    error("the real error")
  end)
  say("%d: close: %s", me, ok and "ok" or "error " .. tostring(msg))
  sim:step(1)
  -- an error on rank 1 alone leaves a simulation (closed, then collected
  -- later): the other ranks close it with no collective to wait in
  ok, msg = pcall(function()
    local s <close> = plummer(1)
    s:step(1)
    if me == 1 then error("rank 1 alone") end
  end)
  say("%d: close one: %s", me, ok and "ok" or "error " .. tostring(msg))
  sim:step(1)
  ok, msg = pcall(function()
    local s = plummer(1)
    s:step(1)
    if me == 1 then error("rank 1 alone") end
  end)
  collectgarbage()
  say("%d: gc one: %s", me, ok and "ok" or "error " .. tostring(msg))
  -- frames flushed, then an error on rank 1 alone: nothing left to agree on
  ok, msg = pcall(function()
    local s <close> = plummer(1)
    s:render("frame_ok.png")
    s:flush()
    if me == 1 then error("rank 1 alone") end
  end)
  say("%d: close flushed: %s", me, ok and "ok" or "error " .. tostring(msg))
  sim:step(1)
  say("%d: done %.17g", me, sim:energy().total)
  return
end

local sim <close> = plummer(1)
local function try(what, f, ...)
  local ok, msg = pcall(f, ...)
  say("%d: %s: %s", me, what, ok and "ok" or "error " .. tostring(msg))
  sim:step(1)   -- collective: every rank must be here, in step
end
local function make(options)
  return function()
    local s <close> = orrery.simulation(options)
    s:step(1)
  end
end

-- restores of different checkpoints: a clock apart, then the same clock
-- with other bodies (fixed steps and hermite, whose fields come along)
try("restore clock", function()
  local r <close> = orrery.restore(me == 1 and "ck_5.hdf5" or "ck_3.hdf5")
  r:step(1)
end)
try("restore bodies", function()
  local r <close> = orrery.restore(me == 1 and "ck_3b.hdf5" or "ck_3.hdf5")
  r:step(1)
end)
try("restore hermite", function()
  local r <close> = orrery.restore(me == 1 and "ck_hb.hdf5" or "ck_h.hdf5")
  r:step(1)
end)
try("restore same", function()
  local r <close> = orrery.restore("ck_5.hdf5")
  r:step(1)
end)

-- settings at creation that no source hash holds
local law = orrery.force{ name = "scaled", params = { a = 1 }, runtime_params = { "a" },
  scale = "G", pair = "f = a * mj * orr_rsqrt3_nz(r2);",
  potential = "u = -a * mi * mj * orr_rsqrt_nz(r2);" }
local body = orrery.ic.plummer{ n = 64, seed = 1 }
try("param", make{ bodies = body, backend = "cpu", force = law,
  params = { a = me == 1 and 3 or 1 } })
local function hermite(o)
  o.bodies, o.backend, o.precision, o.integrator, o.dt_max = body, "cpu", "double", "hermite", 1 / 16
  return o
end
try("eta", make(hermite{ eta = me == 1 and 0.05 or 0.02 }))
try("eta_start", make(hermite{ eta = 0.02, eta_start = me == 1 and 0.02 or 0.01 }))
try("dt_min", make(hermite{ dt_min = me == 1 and 1 / 1024 or 0 }))
try("units", make{ bodies = body, backend = "cpu",
  units = { length = me == 1 and "kpc" or "pc", mass = "Msun" } })

-- settings changed on one rank after creation: refused at the next
-- stepping call, and the same settings everywhere go on
local p <close> = orrery.simulation{ bodies = body, backend = "cpu", force = law }
try("set_param", function()
  if me == 1 then p:set_param("a", 2) end
  p:step(1)
end)
p:set_param("a", 2)
try("set_param alike", function() p:step(1) end)
try("dt", function()
  if me == 1 then sim.dt = 0.02 end
  local ok, msg = pcall(sim.step, sim, 3)
  sim.dt = 0.01   -- alike again, for the next cases
  assert(ok, msg)
end)
try("steps", function() sim:step(me == 1 and 5 or 3) end)
try("advance", function() sim:advance(me == 1 and 0.5 or 0.4) end)
try("advance alike", function() sim:advance(sim.time + 0.1) end)
-- an argument one rank alone gets wrong: refused after the comparison
try("step count", function() sim:step(me == 1 and -1 or 1) end)
try("advance past", function() sim:advance(me == 1 and 0 or sim.time + 0.1) end)
try("step count alike", function() sim:step(-1) end)
-- a run's options (every: a log whose diagnostics are collectives)
try("run options", function() sim:run{ steps = 2, every = me == 1 and 1 or nil } end)
try("run alike", function() sim:run{ steps = 2 } end)
local h <close> = orrery.simulation(hermite{})
try("block steps", function() h:step(me == 1 and 2 or 1) end)
try("dt_max", function()
  if me == 1 then h.dt = 1 / 32 end
  h:run{ steps = 1 }
end)
h.dt = 1 / 32

-- files rank 0 writes for every rank: one path on every rank; a rank's
-- own check of its path (an unknown format on rank 1) comes after
try("write", sim.write, sim, ("out_%d.csv"):format(me == 1 and 1 or 0))
try("write format", sim.write, sim, me == 1 and "out.dat" or "out.csv")
try("snapshot", sim.write, sim, ("snap_%d.hdf5"):format(me == 1 and 1 or 0))
try("checkpoint", sim.checkpoint, sim, ("ck_%d.hdf5"):format(me == 1 and 1 or 0))
try("render", sim.render, sim, ("frame_%d.png"):format(me == 1 and 1 or 0))
try("write alike", sim.write, sim, "out_all.csv")

-- every collective call compared before it runs: an argument of the wrong
-- kind on one rank (caught there before any collective), another method on
-- one rank, on_step failing or stopping on one rank, a body written on one
-- rank before the first step (then rank 0's bodies on every rank)
try("step kind", function() sim:step(me == 1 and 2.5 or 1) end)
try("step or run", function()
  if me == 1 then sim:run{ steps = 1 } else sim:step(1) end
end)
try("on_step error", function()
  sim:run{ steps = 3, on_step = function(_, k)
    if me == 1 and k == 2 then error("on_step failed here") end
  end }
end)
try("on_step stop", function()
  sim:run{ steps = 3, on_step = function(_, k) if me == 1 and k == 2 then return false end end }
end)
local w <close> = plummer(3)
try("write before the first step", function()
  if me == 1 then w:set_body(1, { x = 5 }) end
  w:step(1)
end)
try("bodies after", function() assert(w:body(1).x ~= 5, "rank 1's write kept") w:step(1) end)
-- a write through a buffer on one rank: refused at the next call, which
-- then takes rank 0's bodies on every rank (the energy alike, no rank left)
local x1 = w:body(1).x
try("buffer write", function()
  if me == 1 then w.pos[1] = { 9, 0, 0 } end
  w:energy()
end)
try("energy after a refused write", function()
  assert(w:body(1).x == x1, "rank 1's write kept")
  assert(w:energy().total == w:energy().total)
end)
-- a read through a buffer on one rank alone after a step (a collective:
-- the velocities gathered) meets the others' next call
w:step(1)
try("buffer read alone", function()
  if me == 1 then local _ = w.vel[1] end
  w:energy()
end)
-- two simulations alike but for their bodies: a call on one of them on
-- rank 1 and on the other elsewhere is refused, naming the simulations
try("two simulations", function() if me == 1 then w:step(1) else sim:step(1) end end)
say("%d: done %.17g", me, sim:energy().total)
