-- test_blowup: a run that blows up stops with a message instead of going on
-- (issue: blow-ups caught).  A force law that divides by zero makes every
-- body's acceleration non-finite: sim:step and sim:run stop naming the
-- body, the step and the time, on the CPU and (where one is usable) the
-- GPU, for the fixed-step integrators and hermite.  Three unit masses, two
-- on one spot at softening 0, lose energy at once: run{max_energy_error}
-- stops at the step that passes the bound, and a rolling checkpoint is the
-- last good one, which the message names and which restores.
local T = dofile(arg[0]:match("^(.*/)") .. "testlib.lua")
local orrery = require "orrery"
local dir = os.getenv("TEST_TMP") or "/tmp"

local backends = { "cpu" }
local gpu_ok, gpu_sim = pcall(orrery.simulation, { n = 2, backend = "cuda" })
if gpu_ok then gpu_sim:close(); backends[2] = "cuda" end

-- f = mj / d2 with no guard: the self-pair (d2 = 0) gives 0 * inf = nan
local bad = orrery.force{ name = "divides_by_zero", pair = "f = mj / d2;",
  potential = "u = 0;", jerk = "g = -f / d2;", finite_at_zero = true }

local function three(backend, integrator)
  local opts = { n = 3, backend = backend, force = bad, softening = 0, precision = "double",
    integrator = integrator }
  if integrator == "hermite" then opts.dt_max = 0.125 else opts.dt = 0.1 end
  local sim = orrery.simulation(opts)
  sim:set_body(1, { m = 1 }); sim:set_body(2, { x = 0.5, m = 1 }); sim:set_body(3, { x = 1, m = 1 })
  return sim
end

local WHY = "the run is stopped (a force law that divides by zero, bodies on one spot at "
  .. "softening 0, or too long a step)"

for _, backend in ipairs(backends) do
  T.test(backend .. ": a force law dividing by zero stops sim:step and sim:run", function()
    local sim <close> = three(backend, "leapfrog")
    T.raises("body 1 has a non-finite acceleration or position at step 1 (t = 0.1): " .. WHY,
      sim.step, sim, 3)
    local s2 <close> = three(backend, "yoshida4")
    T.raises("body 1 has a non-finite acceleration or position at step 1 (t = 0.1): " .. WHY,
      s2.run, s2, { steps = 5 })
  end)
  T.test(backend .. ": the same with block time steps", function()
    local sim <close> = three(backend, "hermite")
    local err = T.raises(nil, sim.step, sim, 1)
    T.ok(err:find("body 1 has a non%-finite acceleration or position at ") ~= nil, err)
    T.ok(err:find(WHY, 1, true) ~= nil, err)
  end)
end
if not gpu_ok then T.skip("cuda: blow-ups on the GPU", tostring(gpu_sim):gsub("^[^:]+:%d+: ", "")) end

T.test("run{max_energy_error}: stops at the step past the bound; the last good checkpoint kept", function()
  local sim <close> = orrery.simulation{ n = 3, backend = "cpu", precision = "double",
    softening = 0, dt = 0.1 }
  sim:set_body(1, { m = 1 }); sim:set_body(2, { m = 1 }); sim:set_body(3, { x = 1, m = 1 })
  local path = dir .. "/blowup.ckpt.hdf5"
  T.raises("sim:run: |dE/E0| = 0.00113 at step 2 (t = 0.2) passed max_energy_error = 0.001; the "
    .. "last good checkpoint is " .. path .. " (step 1, t = 0.1)", sim.run, sim,
    { steps = 10, max_energy_error = 1e-3, checkpoint_every = 1, checkpoint = path })
  local back <close> = orrery.restore(path)
  T.eq(back.steps, 1, "the checkpoint holds step 1")
  T.raises("sim:run: 'max_energy_error' must be a positive number (got -1)", sim.run, sim,
    { steps = 1, max_energy_error = -1 })
end)

T.done()
