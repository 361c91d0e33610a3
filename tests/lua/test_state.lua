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

-- With block steps (hermite) the integrator keeps state of its own: a
-- write of the values the simulation already has changes nothing (it would
-- otherwise start the integrator afresh, with other steps: other bits); a
-- changed value does start it afresh, as documented.  sim:verify() changes
-- nothing either.
T.test("hermite: unchanged writes, and verify, change nothing (every write path)", function()
  local law = orrery.force{ name = "weighted_state", params = { k = 1.0, lambda = 1.0 },
    runtime_params = { "k" }, attributes = { "w" }, scale = "k * lambda",
    pair = "f = w_i * w_j * mj * orr_rsqrt3_nz(r2);",
    potential = "u = -(w_i * w_j * mi * mj) * orr_rsqrt_nz(r2);",
    jerk = "const real ir = orr_rsqrt_nz(r2); g = (real)-1.5 * f * ir * ir;" }
  local W = { 1, 0.5, 2, 1, 0.25, 1, 1.5, 0.75 }
  local writes = {
    { "set_body", function(s) s:set_body(2, s:body(2)) end },
    { "set_body {}", function(s) s:set_body(2, {}) end },
    { "set_bodies", function(s) s:set_bodies(s:bodies()) end },
    { "load", function(s) s:load(s:bodies()) end },
    { "sim.pos[i] =", function(s) s.pos[3] = s.pos[3] end },
    { "sim.pos:from_table", function(s) s.pos:from_table(s.pos:to_table()) end },
    { "sim.vel:set", function(s) s.vel:set(1, s.vel:get(1)) end },
    { "sim.mass[i] =", function(s) s.mass[6] = s.mass[6] end },
    { "sim.mass:from_table", function(s) s.mass:from_table(s.mass:to_table()) end },
    { "set_attribute(i)", function(s) s:set_attribute("w", 1, W[1]) end },
    { "set_attribute(list)", function(s) s:set_attribute("w", W) end },
    { "sim.attr.w[i] =", function(s) s.attr.w[3] = W[3] end },
    { "sim.attr.w:from_table", function(s) s.attr.w:from_table(W) end },
    { "set_param runtime", function(s) s:set_param("k", 1.0) end },
    { "set_param baked, same value", function(s) s:set_param("lambda", 1.0) end },
    { "verify", function(s) s:verify() end },
    { "sim.dt = sim.dt", function(s) s.dt = s.dt end },
  }
  for _, precision in ipairs{ "double", "float", "mixed" } do
    local function make()
      local s = cpu{ bodies = orrery.ic.plummer{ n = 8, seed = 12 }, force = law,
        precision = precision, integrator = "hermite", dt_max = 1 / 16, softening = 0.01 }
      s:set_attribute("w", W)
      return s
    end
    local ref <close> = make()
    ref:run{ steps = 3 }
    ref:run{ steps = 3 }
    local want, blocks = state(ref), ref.blocks.blocks
    for _, w in ipairs(writes) do
      local what = precision .. ", " .. w[1]
      local sim <close> = make()
      sim:run{ steps = 3 }
      w[2](sim)
      sim:run{ steps = 3 }
      same(sim, want, what)
      T.eq(sim.blocks.blocks, blocks, what .. ": blocks")
    end
    -- a changed value starts afresh: other steps
    local sim <close> = make()
    sim:run{ steps = 3 }
    sim.mass[6] = sim.mass[6] * (1 + 2 ^ -20)
    sim:run{ steps = 3 }
    T.ok(sim.blocks.blocks ~= blocks, precision .. ": a changed mass starts the steps afresh")
  end
end)

-- ---- item 7: run{until=}'s last step is a step of the run ----------------------

T.test("run{until=}: the shortened last step is a step like the others", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 16, seed = 1 }, dt = 0.1 }
  local seen = {}
  local r = sim:run{ ["until"] = 0.35, progress = false,
    on_step = function(s, step) seen[#seen + 1] = { step, s.steps, s.time } end,
    checkpoint_every = 2, checkpoint = path("until/run.ckpt.hdf5"),
    render_every = 2, render = { path = path("until/f_%02d.png"), width = 32, height = 32 } }
  T.eq(r.steps, 4)
  T.eq(sim.steps, 4)
  T.near(sim.time, 0.35, 1e-15)
  T.eq(#seen, 4, "on_step calls")
  for k = 1, 4 do T.eq(seen[k][1], k, "on_step's step"); T.eq(seen[k][2], k, "sim.steps") end
  T.near(seen[4][3], 0.35, 1e-15, "on_step at the last step sees sim.time")
  local back <close> = orrery.restore(path("until/run.ckpt.hdf5"))
  T.eq(back.steps, 4, "the checkpoint after the last step")
  T.near(back.time, 0.35, 1e-15)
  local frames = 0
  for k = 0, 3 do
    local f = io.open(path(("until/f_%02d.png"):format(k)), "rb")
    if f then frames = frames + 1; f:close() end
  end
  T.eq(frames, 3, "frames at steps 0, 2 and 4")
  -- a run already at 'until' takes no step
  local r2 = sim:run{ ["until"] = 0.35, progress = false }
  T.eq(r2.steps, 0); T.eq(sim.steps, 4)
end)

T.test("run{until=}: max_energy_error sees the shortened step", function()
  local msg = "^sim:run: |dE/E0| = [%d.e+-]+ at step 1 %(t = 0.499%) passed max_energy_error = 1e%-06$"
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 16, seed = 1 }, dt = 0.5,
    precision = "double" }
  T.raises(msg, sim.run, sim, { ["until"] = 0.499, max_energy_error = 1e-6, progress = false })
  T.eq(sim.steps, 1)
  local whole <close> = cpu{ bodies = orrery.ic.plummer{ n = 16, seed = 1 }, dt = 0.5,
    precision = "double" }
  T.raises("^sim:run: |dE/E0| = [%d.e+-]+ at step 1 %(t = 0.5%) passed max_energy_error = 1e%-06$",
    whole.run, whole, { steps = 1, max_energy_error = 1e-6, progress = false })
end)

-- ---- item 8: euler damping on a shortened step ---------------------------------

T.test("euler damping: a shortened step of h takes damping^(h/dt)", function()
  -- one body alone, vx = 1, damping 0.5 per step of 0.1
  local cases = { { 0.2, 0.25 }, { 0.2000001, 0.25 * 0.5 ^ 1e-6 }, { 0.15, 0.5 ^ 1.5 },
    { 0.05, 0.5 ^ 0.5 } }
  for _, c in ipairs(cases) do
    for _, how in ipairs{ "advance", "run" } do
      local sim <close> = cpu{ n = 1, integrator = "euler", damping = 0.5, dt = 0.1,
        precision = "double" }
      sim:set_body(1, { vx = 1, m = 1 })
      if how == "advance" then sim:advance(c[1])
      else sim:run{ ["until"] = c[1], progress = false } end
      T.near(sim:body(1).vx, c[2], 1e-14, how .. " to " .. c[1])
    end
  end
end)

-- ---- item 9: sim:advance at a large clock ----------------------------------------

T.test("advance and run{until=} at t = 300 take 100 steps of 1e-3 per 0.1", function()
  local sim <close> = cpu{ n = 1, dt = 1, precision = "double" }
  sim:step(300)
  T.eq(sim.time, 300)
  sim.dt = 1e-3
  local extra = 0
  for k = 1, 300 do
    local s0 = sim.steps
    sim:advance(sim.time + 0.1)
    if sim.steps - s0 ~= 100 then extra = extra + 1 end
  end
  T.eq(extra, 0, "advances that took other than 100 steps")
  local calls, other = 0, 0
  for k = 1, 50 do
    local n = 0
    local r = sim:run{ ["until"] = sim.time + 0.1, progress = false,
      on_step = function() n = n + 1 end }
    if r.steps ~= 100 or n ~= 100 then other = other + 1 end
  end
  T.eq(other, 0, "runs that took other than 100 steps")
  T.near(sim.time, 300 + 35, 1e-9)
end)

-- ---- item 10: sim:cluster on degenerate bodies -----------------------------------

T.test("cluster: bodies on one spot are the densest; tiny separations, huge masses", function()
  local list = {}
  for i = 1, 10 do   -- spread out
    list[i] = { x = (i * 37 % 19) - 9, y = (i * 53 % 23) - 11, z = (i * 71 % 17) - 8, m = 1 }
  end
  for i = 11, 20 do list[i] = { x = 5, y = 5, z = 5, m = 1 } end
  local sim <close> = cpu{ bodies = list, precision = "double" }
  local c = sim:cluster()
  T.eq(c.density_centre.x, 5); T.eq(c.density_centre.y, 5); T.eq(c.density_centre.z, 5)
  T.eq(c.core_radius, 0)
  T.eq(c.core_density, math.huge)
  T.eq(c.r_half, 0)
  -- eight bodies 1e-120 apart at the origin, masses 1e300
  for i = 11, 18 do
    local j = i - 11
    list[i] = { x = 1e-120 * (j & 1), y = 1e-120 * ((j >> 1) & 1), z = 1e-120 * ((j >> 2) & 1),
      m = 1e300 }
  end
  for i = 1, 10 do list[i].m = 1e300 end
  list[19], list[20] = nil, nil
  local tiny <close> = cpu{ bodies = list, precision = "double" }
  c = tiny:cluster{ k = 4 }
  T.near(c.core_radius, 1e-120 * math.sqrt(3) / 2, 1e-3 * 1e-120)
  T.near(c.density_centre.x / 5e-121, 1, 1e-3)
  T.ok(c.r_half > 1 and c.r_half < 20, "r_half " .. c.r_half)
  T.ok(c.t_rh > 0 and c.t_rh < math.huge, "t_rh " .. c.t_rh)
  for _, r in ipairs(c.lagrangian) do T.ok(r == r and r < math.huge, "a Lagrangian radius " .. r) end
  T.eq(c.core_density, math.huge)   -- about 1e660: beyond the double range
  -- a spot away from the origin: exactly there, no rounding of its coordinates
  local spot = {}
  for i = 1, 10 do spot[i] = { x = 0.1, y = 0.1, z = 0.1, m = 1 + (i % 3) * 0.1 } end
  for i = 1, 10 do spot[10 + i] = { x = 0.1 * (1 + i * 1e-3), y = 0.1 * (1 - i * 2e-3), z = 0.1, m = 1 } end
  local sp <close> = cpu{ bodies = spot, precision = "double" }
  c = sp:cluster()
  T.eq(c.density_centre.x, 0.1); T.eq(c.core_radius, 0, "one spot at 0.1: core radius 0")
  -- the same bodies moved far along x: the same radii
  local plane, far = {}, {}
  for i = 1, 20 do
    plane[i] = { x = 1, y = i, z = (i * 7) % 3, m = 1 + i % 3 }
    far[i] = { x = 1e20, y = i, z = (i * 7) % 3, m = 1 + i % 3 }
  end
  local a <close> = cpu{ bodies = plane, precision = "double" }
  local b <close> = cpu{ bodies = far, precision = "double" }
  local ca, cb = a:cluster(), b:cluster()
  T.eq(cb.r_half, ca.r_half, "x = 1e20: r_half as at x = 1")
  T.eq(cb.core_radius, ca.core_radius, "x = 1e20: core radius as at x = 1")
end)

-- ---- the clock: advance and run{until=} where a run ended --------------------------

T.test("advance and run{until=}: the same steps; again to where a run ended is no step", function()
  -- run{until = 0.3} then advance(0.3): the clock shows 0.3 and nothing moves
  local sim <close> = cpu{ n = 2, dt = 0.1 }
  sim:run{ ["until"] = 0.3, progress = false }
  T.eq(sim.time, 0.3, "a compensated clock")
  sim:advance(0.3)
  T.eq(sim.steps, 3)
  T.eq(sim:run{ ["until"] = 0.3, progress = false }.steps, 0)
  -- advance(T) twice, for many dt and T: never an error, never a second step
  for k = 1, 200 do
    local dt, t = 0.05 + 0.013 * k, 0.7 + 0.37 * k
    local s <close> = cpu{ n = 1, dt = dt }
    s:advance(t)
    local n = s.steps
    s:advance(t)
    T.eq(s.steps, n, ("dt %g, T %g: a second advance"):format(dt, t))
  end
  -- run{until = T} takes the very steps of advance(T), whatever T
  for _, t in ipairs{ 3 - 5e-10, 3, 3 + 1e-9, 2.5, 0.3 } do
    local a <close> = cpu{ bodies = orrery.ic.plummer{ n = 8, seed = 2 }, dt = 1 / 3,
      precision = "double" }
    local b <close> = cpu{ bodies = orrery.ic.plummer{ n = 8, seed = 2 }, dt = 1 / 3,
      precision = "double" }
    a:run{ ["until"] = t, progress = false, every = 2 }
    b:advance(t)
    T.eq(a.time, b.time, "until " .. t .. ": time"); T.eq(a.steps, b.steps)
    T.same_bodies(a, b, "until " .. t)
  end
  -- a finished job resumed: --resume of its last checkpoint runs nothing
  local p = path("done.ckpt.hdf5")
  local j <close> = cpu{ n = 2, dt = 0.1 }
  j:run{ ["until"] = 0.3, checkpoint_every = 1, checkpoint = p, progress = false }
  local r <close> = orrery.restore(p)
  T.eq(r:run{ ["until"] = 0.3, progress = false }.steps, 0)
end)

T.test("run from between block steps: ending the interval is its first step", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 16, seed = 4 }, integrator = "hermite",
    dt_max = 0.1, softening = 0.05 }
  sim:run{ steps = 1 }
  sim:step()
  local seen = {}
  local r = sim:run{ ["until"] = 0.45, progress = false,
    on_step = function(s, k) seen[#seen + 1] = s.steps .. "@" .. k end }
  T.eq(table.concat(seen, " "), "2@1 3@2 4@3 5@4")
  T.eq(r.steps, 4); T.near(sim.time, 0.45, 1e-15)
  sim:step()
  T.eq(sim:run{ steps = 2, progress = false }.steps, 2)
  T.eq(sim.steps, 7)
  -- the smallest step is a time: that of a shortened interval is a fraction of it
  sim:advance(sim.time + 1e-3)
  T.ok(sim.blocks.smallest_dt <= 1e-3 * (1 + 1e-9), "smallest_dt " .. sim.blocks.smallest_dt)
end)

T.test("max_energy_error: the message names the line of the sim:run call", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 16, seed = 1 }, dt = 0.5,
    precision = "double" }
  local ok, e = pcall(function()
    sim:run{ steps = 3, max_energy_error = 1e-6, progress = false }   -- this line
  end)
  T.ok(not ok and e:find("^[^:]*test_state%.lua:%d+: sim:run: |dE/E0| = ") ~= nil, e)
  local line = debug.getinfo(1, "l").currentline
  T.ok(e:find(":" .. (line - 3) .. ": ", 1, true) ~= nil, "the line: " .. e)
end)

-- ---- item 11: float precision refuses values beyond the float range ------------

T.test("float precision refuses params and box lengths beyond the float range", function()
  local law = orrery.force{ name = "scaled_state", params = { k = 1, c = 1 }, runtime_params = { "k" },
    scale = "k * c", pair = "f = mj * orr_rsqrt3_nz(r2);", potential = "u = -(mi * mj) * orr_rsqrt_nz(r2);" }
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 8 }, force = law }
  local W = "invalid param '%s' = 1e+39: must be finite and at most 3.4e+38 in magnitude in float"
  T.raises("sim:set_param: " .. W:format("k"), sim.set_param, sim, "k", 1e39)
  T.raises("sim:set_param: " .. W:format("c"), sim.set_param, sim, "c", 1e39)
  T.ok(sim:energy().total < 0, "the params as they were")
  T.raises("^orrery.simulation: .*" .. W:format("k"):gsub("[%+%.%(%)]", "%%%0") .. "$",
    orrery.simulation, { n = 2, backend = "cpu", force = law, params = { k = 1e39 } })
  local dbl <close> = cpu{ n = 2, force = law, params = { k = 1e39 }, precision = "double" }
  T.raises("^orrery.simulation: invalid box length 1e%+39 on axis x",
    orrery.simulation, { n = 2, backend = "cpu", box = { 1e39, 1, 1 } })
end)

T.test("float precision refuses values beyond the float range, every way in", function()
  local R = " is beyond the float range (at most 3.40282347e+38 in magnitude; precision "
    .. "\"double\" holds it)"
  local sim <close> = cpu{ n = 3, force = "coulomb" }
  sim:set_bodies{ { x = -1, m = 1 }, { x = 1, m = 1 }, { y = 1, m = 1 } }
  sim:set_attribute("charge", { 1, -1, 1 })
  local before = state(sim)
  T.raises("bad argument #1 to 'set_bodies' (body 1: 'x' = 1e+39" .. R .. ")",
    function() sim:set_bodies{ { x = 1e39 } } end)
  T.raises("bad argument #2 to 'set_body' (body 2: 'vy' = -1e+39" .. R .. ")",
    function() sim:set_body(2, { vy = -1e39 }) end)
  T.raises("bad argument #1 to 'load' (body 2: 'm' = 1e+39" .. R .. ")",
    function() sim:load{ {}, { m = 1e39 }, {} } end)
  T.raises("^bad argument #1 to 'load' %(body 1: '[xyzvm]+' = [-%d.e+]+ is beyond the float range",
    function() sim:load(orrery.ic.plummer{ n = 3, mass = 1e100 }) end)   -- an orrery.Bodies
  T.raises("orrery.simulation: 'bodies': body 1: 'x' = 1e+39" .. R,
    function() cpu{ bodies = { { x = 1e39 } } } end)
  T.raises("^orrery.simulation: 'bodies': body 1: '[xyzvm]+' = [-%d.e+]+ is beyond the float range",
    function() cpu{ bodies = orrery.ic.plummer{ n = 3, mass = 1e100 } } end)
  T.raises("sim.pos[1]: y = 1e+39" .. R, function() sim.pos[1] = { 0, 1e39, 0 } end)
  T.raises("bad argument #4 to 'set' (sim.vel[2]: vz = 1e+39" .. R .. ")",
    function() sim.vel:set(2, 0, 0, 1e39) end)
  T.raises("sim.mass[1] = 1e+39" .. R, function() sim.mass[1] = 1e39 end)
  T.raises("bad argument #1 to 'from_table' (element 2: sim.mass[2] = 1e+39" .. R .. ")",
    function() sim.mass:from_table{ 1, 1e39, 1 } end)
  T.raises("bad argument #1 to 'from_table' (element 9: sim.pos[3]: z = -1e+39" .. R .. ")",
    function() sim.pos:from_table{ 0, 0, 0, 0, 0, 0, 0, 0, -1e39 } end)
  T.raises("bad argument #3 to 'set_attribute' (body 1: 'charge' = 1e+39" .. R .. ")",
    function() sim:set_attribute("charge", 1, 1e39) end)
  T.raises("bad argument #2 to 'set_attribute' (body 3: 'charge' = 1e+39" .. R .. ")",
    function() sim:set_attribute("charge", { 1, 2, 1e39 }) end)
  T.raises("sim.attr.charge[1] = 1e+39" .. R, function() sim.attr.charge[1] = 1e39 end)
  T.raises("bad argument #2 to 'set' (sim.attr.charge[3] = -1e+39" .. R .. ")",
    function() sim.attr.charge:set(3, -1e39) end)
  -- nothing changed: a finite energy, a checkpoint that restores
  same(sim, before, "after the refusals")
  for i = 1, 3 do T.eq(sim:attribute("charge", i), i == 2 and -1 or 1) end
  local e = sim:energy()
  T.ok(e.total == e.total and math.abs(e.total) < math.huge, "energy " .. e.total)
  sim:checkpoint(path("range.ckpt.hdf5"))
  local back <close> = orrery.restore(path("range.ckpt.hdf5"))
  same(back, before, "restored")
  -- the largest float is taken; double and mixed hold more
  sim:set_body(1, { x = 3.4028234663852886e38 })
  T.eq(sim:body(1).x, 3.4028234663852886e38)
  local d <close> = cpu{ n = 2, precision = "double" }
  d:set_bodies{ { x = 1e39, m = 1 }, { x = -1e39, m = 1e45 } }
  d.vel[1] = { 1e200, 0, 0 }
  d:step(1)
  T.near(d:body(1).x / (1e39 + 0.01 * 1e200), 1, 1e-15)
end)

T.done()
