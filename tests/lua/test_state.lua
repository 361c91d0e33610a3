-- test_state: the simulation's state keeps what its clock says: writes
-- after steps (every way in: bodies, buffers, attributes, params) show and
-- continue the state at sim.time, in the bodies read back and in
-- checkpoints; sim:run{until=}'s shortened last step is a step of the run
-- (on_step, frames, checkpoints, the energy bound); euler damping on a
-- shortened step; sim:advance's stop test at a large clock; sim:cluster on
-- degenerate bodies; float precision refusing values beyond its range.
-- CPU backend, small N.
local T = dofile(arg[0]:match("^(.*/)") .. "testlib.lua")
local orrery = require "orrery"

local tmp = (os.getenv("TEST_TMP") or "/tmp") .. "/state-" .. math.random(1 << 30)
local function path(name) return tmp .. "/" .. name end

local function cpu(opts)
  opts.backend = "cpu"
  return orrery.simulation(opts)
end

-- every value of the bodies and the clock equal (==) to want's
local function same(sim, want, what)
  T.eq(sim.time, want.time, what .. ": time")
  T.eq(sim.steps, want.steps, what .. ": steps")
  local got = sim:bodies()
  for i = 1, #want.bodies do
    for _, k in ipairs{ "x", "y", "z", "vx", "vy", "vz", "m" } do
      if got[i][k] ~= want.bodies[i][k] then
        error(("%s: body %d %s = %.17g, expected %.17g"):format(what, i, k, got[i][k],
          want.bodies[i][k]), 2)
      end
    end
  end
end

local function state(sim) return { time = sim.time, steps = sim.steps, bodies = sim:bodies() } end

-- ---- item 6: writes keep the clock's state -------------------------------------

T.test("an attribute written after steps keeps the bodies at sim.time", function()
  -- two bodies drifting at vx = 1, no charges: x1 = t
  for _, how in ipairs{ "set_attribute", "sim.attr" } do
    local sim <close> = cpu{ n = 2, force = "coulomb", dt = 0.1 }
    sim:set_bodies{ { x = 0, vx = 1, m = 1 }, { x = 5, vx = 1, m = 1 } }
    sim:step(10)
    if how == "set_attribute" then sim:set_attribute("charge", 1, 0)
    else sim.attr.charge[1] = 0 end
    T.near(sim.time, 1, 1e-15, how)
    T.near(sim:body(1).x, 1, 1e-6, how .. ": x1 at t = 1")
    sim:step(10)
    T.near(sim:body(1).x, 2, 1e-6, how .. ": x1 at t = 2")
  end
end)

-- A law with a runtime param (k), a baked one (lambda) and an attribute.
local function screened()
  return orrery.force{
    name = "screened_state", params = { lambda = 0.5, k = 1.0 }, runtime_params = { "k" },
    attributes = { "charge" }, scale = "k",
    pair = [[
real inv = orr_rsqrt_nz(r2), r = r2 * inv;
f = -(charge_i / mi) * charge_j * orr_exp(-r / lambda) * (1 + r / lambda) * (inv * inv * inv);
]],
    potential = [[
real inv = orr_rsqrt_nz(r2);
u = charge_i * charge_j * orr_exp(-r2 * inv / lambda) * inv;
]] }
end

T.test("every write path after steps: bodies and checkpoints at the clock's state", function()
  local law = screened()
  local M = { 1, 0.5, 2, 1, 0.25, 1 }
  local Q = { 1, -1, 0.5, -0.5, 1, -1 }
  -- each writes a value the simulation already has
  local writes = {
    { "set_body", function(s) s:set_body(2, { m = M[2] }) end },
    { "set_bodies", function(s) s:set_bodies{ { m = M[1] }, { m = M[2] } } end },
    { "load", function(s) s:load(s:bodies()) end },
    { "sim.pos[i] =", function(s) s.pos[3] = s.pos[3] end },
    { "sim.pos:from_table", function(s) s.pos:from_table(s.pos:to_table()) end },
    { "sim.vel:set", function(s) s.vel:set(1, s.vel:get(1)) end },
    { "sim.mass[i] =", function(s) s.mass[2] = M[2] end },
    { "sim.mass:set", function(s) s.mass:set(4, M[4]) end },
    { "sim.mass:from_table", function(s) s.mass:from_table(M) end },
    { "set_attribute(i)", function(s) s:set_attribute("charge", 1, Q[1]) end },
    { "set_attribute(list)", function(s) s:set_attribute("charge", Q) end },
    { "sim.attr.charge[i] =", function(s) s.attr.charge[3] = Q[3] end },
    { "sim.attr.charge:set", function(s) s.attr.charge:set(2, Q[2]) end },
    { "sim.attr.charge:from_table", function(s) s.attr.charge:from_table(Q) end },
    { "set_param runtime", function(s) T.eq(s:set_param("k", 1.0), false) end },
    { "set_param baked", function(s)
      T.eq(s:set_param("lambda", 0.75), true)
      T.eq(s:set_param("lambda", 0.5), true)
    end },
  }
  for _, precision in ipairs{ "float", "double" } do
    local function make()
      local s = cpu{ n = 6, force = law, precision = precision, dt = 0.01, softening = 0.1 }
      local b = orrery.ic.uniform_cube{ n = 6, seed = 11 }
      s:load(b)
      s.mass:from_table(M)
      s:set_attribute("charge", Q)
      return s
    end
    local ref <close> = make()
    ref:step(7)
    local at7 = state(ref)
    ref:checkpoint(path(precision .. "/ref.ckpt.hdf5"))
    ref:step(5)
    local at12 = state(ref)
    for _, w in ipairs(writes) do
      local what = precision .. ", " .. w[1]
      local sim <close> = make()
      sim:step(7)
      w[2](sim)   -- the first touch of the bodies since the steps
      same(sim, at7, what .. ": read back")
      local p = path(precision .. "/" .. w[1]:gsub("[^%w]", "_") .. ".ckpt.hdf5")
      sim:checkpoint(p)
      local back <close> = orrery.restore(p)
      same(back, at7, what .. ": checkpoint")
      T.eq(back:attribute("charge", 1), Q[1], what .. ": checkpoint's charge")
      sim:step(5)
      same(sim, at12, what .. ": 5 steps on")
      -- written before any read, a checkpoint shows the clock's state too
      local again <close> = make()
      again:step(7)
      w[2](again)
      again:checkpoint(p)
      local back2 <close> = orrery.restore(p)
      same(back2, at7, what .. ": checkpoint right after the write")
    end
  end
end)

T.done()
