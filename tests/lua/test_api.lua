-- test_api: the orrery module as a script uses it: construction and fields,
-- bodies as tables, typed buffers, stepping, diagnostics against values
-- worked by hand, output files, sim:run (log, on_step, early stop), close
-- and garbage collection, and every initial-condition generator (count,
-- total mass, determinism for a seed).  CPU backend, small N.
local T = dofile(arg[0]:match("^(.*/)") .. "testlib.lua")
local orrery = require "orrery"

local function cpu(opts)
  opts.backend = "cpu"
  return orrery.simulation(opts)
end

T.test("module", function()
  T.ok(orrery.version:match("^%d+%.%d+%.%d+"), "version")
  T.eq(type(orrery.simulation), "function")
  T.eq(type(orrery.Sim), "table")
  T.eq(type(orrery.Sim.run), "function")
  T.eq(type(orrery.Sim.step), "function")
  T.eq(require "orrery", orrery)
  T.eq(type(orrery._isatty(2)), "boolean")
  local t0 = orrery._clock()
  T.ok(orrery._clock() >= t0, "monotonic clock")
end)

T.test("fields and defaults", function()
  local sim <close> = cpu{ n = 16 }
  T.eq(sim.n, 16); T.eq(sim.time, 0); T.eq(sim.steps, 0); T.eq(sim.dt, 0.01)
  T.eq(sim.backend, "cpu"); T.eq(sim.precision, "float"); T.eq(sim.integrator, "leapfrog")
  T.eq(sim.force, "gravity"); T.eq(sim.G, 1); T.eq(sim.softening, 0.01); T.eq(sim.damping, 1)
  T.eq(sim.dims, 3); T.eq(sim.box, nil); T.eq(sim.nonexistent, nil)
  T.eq(math.type(sim.n), "integer"); T.eq(math.type(sim.steps), "integer")
  T.ok(tostring(sim):match("^orrery%.Sim %(n=16, cpu, float, leapfrog, t=0"), tostring(sim))
  T.eq(sim.pos, sim.pos, "buffers are cached")
  -- all bodies start at the origin, at rest, with mass 0
  local b = sim:body(16)
  for _, k in ipairs{ "x", "y", "z", "vx", "vy", "vz", "m" } do T.eq(b[k], 0, k) end
end)

T.test("settings", function()
  local sim <close> = cpu{ n = 4, precision = "double", dt = 0.005, integrator = "yoshida4",
    softening = 0.05, G = 2, dims = 2, box = { 1, 2 } }
  T.eq(sim.precision, "double"); T.eq(sim.dt, 0.005); T.eq(sim.integrator, "yoshida4")
  T.eq(sim.softening, 0.05); T.eq(sim.G, 2); T.eq(sim.dims, 2)
  T.eq(sim.box[1], 1); T.eq(sim.box[2], 2); T.eq(sim.box[3], 0)
  sim.dt = 0.02
  T.eq(sim.dt, 0.02)
  local e <close> = cpu{ n = 2, integrator = "euler", damping = 0.95 }
  T.eq(e.damping, 0.95); T.eq(e.integrator, "euler")
end)

T.test("set_body and body", function()
  local sim <close> = cpu{ n = 3, precision = "double" }
  sim:set_body(2, { x = 1, y = 2, z = 3, vx = 4, vy = 5, vz = 6, m = 7 })
  local b = sim:body(2)
  T.eq(b.x, 1); T.eq(b.y, 2); T.eq(b.z, 3); T.eq(b.vx, 4); T.eq(b.vy, 5); T.eq(b.vz, 6)
  T.eq(b.m, 7)
  sim:set_body(2, { y = -2 })   -- missing fields keep their values
  b = sim:body(2)
  T.eq(b.x, 1); T.eq(b.y, -2); T.eq(b.m, 7)
  T.eq(sim:body(1).m, 0)
end)

T.test("set_bodies, bodies and load", function()
  local sim <close> = cpu{ n = 4, precision = "double" }
  sim:set_bodies{ { x = 1, m = 1 }, { x = 2, m = 2 } }
  local all = sim:bodies()
  T.eq(#all, 4)
  T.eq(all[1].x, 1); T.eq(all[2].x, 2); T.eq(all[2].m, 2); T.eq(all[3].m, 0)
  -- all or nothing: a bad third entry leaves the first two untouched
  T.raises("%(body 3: 'x' must be a finite number %(got \"a\"%)%)$", sim.set_bodies, sim,
    { { x = 9 }, { x = 9 }, { x = "a" } })
  T.eq(sim:body(1).x, 1)
  -- load replaces everything; missing fields are 0
  sim:load{ { x = 5 }, { y = 5 }, { z = 5 }, { m = 5 } }
  T.eq(sim:body(1).x, 5); T.eq(sim:body(1).m, 0); T.eq(sim:body(4).m, 5); T.eq(sim:body(4).x, 0)
  T.raises("sim:load: 3 bodies given, simulation has 4", sim.load, sim, { {}, {}, {} })
  local bodies = orrery.ic.uniform_cube{ n = 4, seed = 2 }
  sim:load(bodies)
  for i = 1, 4 do
    local a, b = sim:body(i), bodies:body(i)
    for _, k in ipairs{ "x", "y", "z", "vx", "vy", "vz", "m" } do T.eq(a[k], b[k], k) end
  end
end)

T.test("simulation{bodies=}", function()
  local bodies = orrery.ic.plummer{ n = 64, seed = 5 }
  local sim <close> = cpu{ bodies = bodies, precision = "double" }
  T.eq(sim.n, 64)
  T.eq(sim:body(64).x, bodies:body(64).x)
  local s2 <close> = cpu{ n = 64, bodies = bodies }
  T.eq(s2.n, 64)
  local s3 <close> = cpu{ bodies = { { x = 1, m = 1 }, { x = -1, m = 1 } }, precision = "double" }
  T.eq(s3.n, 2); T.eq(s3:body(2).x, -1)
  T.raises("orrery.simulation: 'n' is 10 but 'bodies' has 64 bodies", orrery.simulation,
    { n = 10, bodies = bodies, backend = "cpu" })
end)

T.test("buffers", function()
  local sim <close> = cpu{ n = 3, precision = "double" }
  local pos, vel, mass = sim.pos, sim.vel, sim.mass
  T.eq(#pos, 3); T.eq(#vel, 3); T.eq(#mass, 3)
  pos[2] = { 1, 2, 3 }
  vel:set(2, 4, 5, 6)
  mass[2] = 7
  local b = sim:body(2)
  T.eq(b.x, 1); T.eq(b.y, 2); T.eq(b.z, 3); T.eq(b.vx, 4); T.eq(b.vy, 5); T.eq(b.vz, 6)
  T.eq(b.m, 7)
  local p = pos[2]
  T.eq(#p, 3); T.eq(p[1], 1); T.eq(p[2], 2); T.eq(p[3], 3)
  local x, y, z = vel:get(2)
  T.eq(x, 4); T.eq(y, 5); T.eq(z, 6)
  T.eq(mass[2], 7); T.eq(mass:get(2), 7)
  mass:set(3, 0.5)
  T.eq(sim:body(3).m, 0.5)
  -- the position writes did not touch the masses and the other way round
  T.eq(pos[3][1], 0)
  local flat = pos:to_table()
  T.eq(#flat, 9); T.eq(flat[4], 1); T.eq(flat[5], 2); T.eq(flat[6], 3)
  T.eq(#mass:to_table(), 3)
  pos:from_table{ 1, 1, 1, 2, 2, 2, 3, 3, 3 }
  T.eq(sim:body(3).z, 3)
  mass:from_table{ 1, 2, 3 }
  T.eq(sim:body(1).m, 1); T.eq(sim:body(3).m, 3)
  T.ok(tostring(pos):match("^orrery%.Buffer %(sim%.pos, 3 x 3%)"), tostring(pos))
  T.eq(pos.nosuchmethod, nil)
end)

T.test("buffer writes are used by the next step", function()
  local sim <close> = cpu{ n = 2, precision = "double", softening = 0, dt = 1e-3 }
  sim.pos[1] = { -0.5, 0, 0 }
  sim.pos[2] = { 0.5, 0, 0 }
  sim.mass:from_table{ 1, 1 }
  sim:step()
  -- attracted towards each other: v = a dt = 1 * 1e-3 (leapfrog: after a whole step)
  T.near(sim.vel[1][1], 1e-3, 1e-6)
  T.near(sim.vel[2][1], -1e-3, 1e-6)
end)

T.test("advance to a time", function()
  -- free bodies drift exactly: x = x0 + v t, whatever the steps
  local sim <close> = cpu{ n = 2, precision = "double", dt = 0.25 }
  sim.pos[1] = { 0, 0, 0 }
  sim.pos[2] = { 100, 0, 0 }
  sim.vel[1] = { 1, 0, 0 }
  sim.mass:from_table{ 0, 0 }
  sim:advance(1.1)
  T.eq(sim.steps, 5)   -- four whole steps and one of 0.1
  T.near(sim.time, 1.1, 1e-15)
  T.near(sim.pos[1][1], 1.1, 1e-15)
  sim:advance(1.1)
  T.eq(sim.steps, 5)
  T.raises("bad argument #1 to 'advance' (time must be finite and >= the current time 1.1 (got 1))",
           function() sim:advance(1.0) end)
end)

T.test("step, time and steps", function()
  local sim <close> = cpu{ n = 8, dt = 0.25 }
  sim:step()
  sim:step(3)
  sim:step(0)
  T.eq(sim.steps, 4)
  T.near(sim.time, 1.0, 1e-15)
  sim.dt = 0.5
  sim:step(2)
  T.near(sim.time, 2.0, 1e-15)
end)

T.test("two-body diagnostics", function()
  -- m = 1 and 3 at x = -0.75 and 0.25 (centre of mass at 0), no softening
  local sim <close> = cpu{ n = 2, precision = "double", softening = 0 }
  sim:set_body(1, { x = -0.75, vy = -0.3, m = 1 })
  sim:set_body(2, { x = 0.25, vy = 0.1, m = 3 })
  local e = sim:energy()
  T.near(e.kinetic, 0.5 * 0.09 + 0.5 * 3 * 0.01, 1e-12)
  T.near(e.potential, -3, 1e-12)
  T.near(e.total, e.kinetic + e.potential, 1e-15)
  local p = sim:momentum()
  T.near(p.x, 0, 1e-15); T.near(p.y, 0, 1e-15); T.near(p.z, 0, 1e-15)
  local l = sim:angular_momentum()
  T.near(l.z, (-0.75) * (-0.3) + 3 * 0.25 * 0.1, 1e-12)
  T.near(l.x, 0, 1e-15)
  local x, v, m = sim:center_of_mass()
  T.near(x.x, 0, 1e-15); T.near(v.y, 0, 1e-15); T.eq(m, 4)
  T.near(sim:virial_ratio(), e.kinetic / 3, 1e-12, "K/|U|")
end)

T.test("kepler orbit closes (yoshida4, double)", function()
  for _, ecc in ipairs{ 0, 0.5 } do
    local bodies = orrery.ic.kepler{ m1 = 1, m2 = 1e-3, a = 1, e = ecc }
    local period = 2 * math.pi / math.sqrt(1 + 1e-3)
    local steps = 4000
    local sim <close> = cpu{ bodies = bodies, precision = "double", softening = 0,
      integrator = "yoshida4", dt = period / steps }
    local start = sim:body(2)
    sim:step(steps)
    local b = sim:body(2)
    local r = math.sqrt(start.x ^ 2 + start.y ^ 2)
    T.near(math.sqrt((b.x - start.x) ^ 2 + (b.y - start.y) ^ 2) / r, 0, 1e-6, "e=" .. ecc)
  end
end)

T.test("write .txt and .csv", function()
  local sim <close> = cpu{ bodies = orrery.ic.uniform_cube{ n = 5 } }
  local dir = os.getenv("TEST_TMP") or "/tmp"
  for _, ext in ipairs{ "txt", "csv" } do
    local path = string.format("%s/orrery-lua-test-%d.%s", dir, math.random(1 << 30), ext)
    sim:write(path)
    local lines = {}
    for line in io.lines(path) do lines[#lines + 1] = line end
    os.remove(path)
    T.eq(#lines, 6, ext)
    local sep = ext == "csv" and "," or " "
    T.eq(lines[1], table.concat({ "id", "x", "y", "z", "vx", "vy", "vz", "m" }, sep))
    T.ok(lines[2]:match("^1" .. sep), lines[2])
  end
  T.raises("^cannot write '.*': unknown format", sim.write, sim, "out.dat")
end)

-- sim:run's log goes to io.stdout: catch it
local function capture(fn)
  local out, real = {}, io.stdout
  io.stdout = { write = function(self, ...) for _, s in ipairs{ ... } do out[#out + 1] = s end end,
    flush = function() end }
  local ok, err = pcall(fn)
  io.stdout = real
  if not ok then error(err, 0) end
  local text = table.concat(out)
  local lines = {}
  for line in text:gmatch("[^\n]+") do lines[#lines + 1] = line end
  return lines
end

T.test("run: log lines", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 64 }, dt = 0.001 }
  local res
  local lines = capture(function() res = sim:run{ steps = 10, every = 4, progress = false } end)
  T.eq(res.steps, 10); T.ok(res.seconds >= 0)
  T.eq(sim.steps, 10)
  -- header, then steps 0, 4, 8 and the last one, 10
  T.eq(#lines, 5)
  T.ok(lines[1]:match("^%s+step%s+t%s+E%s+dE/E0%s+|P|%s+Q%s+steps/s$"), lines[1])
  local steps = {}
  for i = 2, 5 do steps[#steps + 1] = tonumber(lines[i]:match("^%s*(%d+)")) end
  T.eq(table.concat(steps, ","), "0,4,8,10")
  T.ok(lines[2]:match("0%.000e%+00"), "dE/E0 is 0 at the start: " .. lines[2])
  for i = 2, 5 do T.eq(#lines[i], #lines[1], "aligned columns") end
  -- no log without every
  T.eq(#capture(function() sim:run{ steps = 3 } end), 0)
end)

T.test("run: on_step and early stop", function()
  local sim <close> = cpu{ n = 8 }
  local seen = {}
  local res = sim:run{ steps = 5, on_step = function(s, step)
    T.eq(s, sim)
    seen[#seen + 1] = step
  end }
  T.eq(table.concat(seen, ","), "1,2,3,4,5")
  T.eq(res.steps, 5)
  res = sim:run{ steps = 100, on_step = function(_, step) return step < 3 end }
  T.eq(res.steps, 3)
  T.eq(sim.steps, 8)
  T.eq(sim:run{ steps = 0 }.steps, 0)
end)

T.test("run can be extended from Lua", function()
  function orrery.Sim:twice() self:step(2) end
  local sim <close> = cpu{ n = 2 }
  sim:twice()
  T.eq(sim.steps, 2)
  orrery.Sim.twice = nil
end)

T.test("close", function()
  local sim = cpu{ n = 4 }
  local pos = sim.pos
  sim:close()
  sim:close()   -- twice is fine
  T.eq(tostring(sim), "orrery.Sim (closed)")
  T.raises("orrery.Sim: simulation is closed", sim.step, sim)
  T.raises("orrery.Sim: simulation is closed", function() return sim.n end)
  T.raises("orrery.Buffer: simulation is closed", function() return pos[1] end)
  T.raises("orrery.Buffer: simulation is closed", function() return #pos end)
  T.raises("orrery.Sim: simulation is closed", function() sim:run{ steps = 1 } end)
  local inner
  do
    local s <close> = cpu{ n = 4 }
    inner = s
  end
  T.eq(tostring(inner), "orrery.Sim (closed)", "<close> closes at the end of the block")
end)

T.test("garbage collection", function()
  for _ = 1, 20 do cpu{ n = 16 } end
  local pos = cpu{ n = 16 }.pos   -- the buffer keeps its simulation alive
  collectgarbage(); collectgarbage()
  pos[16] = { 1, 2, 3 }
  T.eq(pos[16][3], 3)
  pos = nil
  collectgarbage(); collectgarbage()
end)

-- every generator: its documented count and total mass, and the same
-- bodies for the same seed
local expected = {
  plummer = { args = { n = 100, seed = 3 }, n = 100, mass = 1 },
  uniform_cube = { args = { n = 100, seed = 3 }, n = 100, mass = 1 },
  uniform_sphere = { args = { n = 100, seed = 3 }, n = 100, mass = 1 },
  random_box_2d = { args = { n = 100, seed = 3 }, n = 100, mass = 1 },
  kepler = { args = { m1 = 1, m2 = 0.5 }, n = 2, mass = 1.5 },
  solar_system = { args = {}, n = 9, mass = 1.00134 },
  cold_collapse = { args = { n = 100, seed = 3 }, n = 100, mass = 1 },
  galaxy_collision = { args = { n = 100, seed = 3 }, n = 100, mass = 1 },
}

local function same(a, b)
  for i = 1, a.n do
    local p, q = a:body(i), b:body(i)
    for _, k in ipairs{ "x", "y", "z", "vx", "vy", "vz", "m" } do
      if p[k] ~= q[k] then return false end
    end
  end
  return a.n == b.n
end

T.test("ic: list", function()
  local names = orrery.ic.list()
  T.ok(#names >= 1)
  for _, name in ipairs(names) do T.eq(type(orrery.ic[name]), "function", name) end
end)

for _, name in ipairs(orrery.ic.list()) do
  T.test("ic." .. name .. ": count, mass, seed", function()
    local want = expected[name]
    T.ok(want, "a test case for " .. name)
    local gen = orrery.ic[name]
    local b = gen(want.args)
    T.eq(b.n, want.n); T.eq(#b, want.n)
    local m = 0
    for i = 1, b.n do m = m + b:body(i).m end
    T.near(m, want.mass, 1e-4, "total mass")
    T.ok(same(b, gen(want.args)), "same seed, same bodies")
    if want.args.seed then
      local other = {}
      for k, v in pairs(want.args) do other[k] = v end
      other.seed = want.args.seed + 1
      T.ok(not same(b, gen(other)), "another seed, other bodies")
      other.seed = nil
      local s1 = {}
      for k, v in pairs(other) do s1[k] = v end
      s1.seed = 1
      T.ok(same(gen(other), gen(s1)), "seed defaults to 1")
    end
  end)
end

T.test("ic: plummer in Henon units", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 512, seed = 7 }, precision = "double",
    softening = 0 }
  local e = sim:energy()
  T.near(e.total, -0.25, 0.03, "E = -1/4")
  T.near(sim:virial_ratio(), 0.5, 0.1)
  local x, v, m = sim:center_of_mass()
  T.near(m, 1, 1e-12)
  T.near(math.sqrt(x.x ^ 2 + x.y ^ 2 + x.z ^ 2), 0, 1e-12, "centred")
  T.near(math.sqrt(v.x ^ 2 + v.y ^ 2 + v.z ^ 2), 0, 1e-12, "at rest")
end)

T.test("momentum stays zero", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 128, seed = 2 }, precision = "double" }
  sim:step(20)
  local p = sim:momentum()
  T.near(math.sqrt(p.x ^ 2 + p.y ^ 2 + p.z ^ 2), 0, 1e-12)
end)

T.test("2D periodic box keeps bodies inside", function()
  local sim <close> = cpu{ bodies = orrery.ic.random_box_2d{ n = 64, seed = 4 }, dims = 2,
    box = { 1, 1 }, dt = 1e-3, integrator = "euler", precision = "double" }
  sim.pos[1] = { 1.25, -0.25, 0.5 }
  sim:step(5)
  for i = 1, sim.n do
    local x, y, z = sim.pos:get(i)
    T.ok(x >= 0 and x < 1 and y >= 0 and y < 1, "inside the box")
    T.eq(z, 0, "z held at 0 in 2D")
  end
end)

T.test("tuning: sim.config, sim:tune, the store on a second start", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 700, seed = 9 }, tune = false }
  local c = sim.config
  T.eq(c.source, "default")
  T.eq(c.block, 1024)
  local e0 = sim:energy().total
  c = sim:tune{ budget = 0.3 }
  T.eq(c.source, "tuned")
  T.ok(c.block >= 16 and c.threads >= 0, "a valid CPU configuration")
  T.near(sim:energy().total, e0, 1e-6 * math.abs(e0), "state kept across the switch")
  sim:step(2)
  local again <close> = cpu{ bodies = orrery.ic.plummer{ n = 700, seed = 9 }, tune = true }
  T.eq(again.config.source, "store")
  T.eq(again.config.block, c.block)
  T.eq(again.config.threads, c.threads)
  local ok, err = pcall(sim.tune, sim, { budget = -1 })
  T.ok(not ok and err:find("'budget' must be a positive number", 1, true), err)
  ok, err = pcall(cpu, { n = 4, tune = "sometimes" })
  T.ok(not ok and err:find([['tune' must be "auto", true or false (got "sometimes")]], 1, true), err)
end)

T.test("kernel = {...}: a configuration of one's own, untuned, on every rank alike", function()
  local bodies = orrery.ic.plummer{ n = 300, seed = 5 }
  local a <close> = orrery.simulation{ bodies = bodies, backend = "cpu", tune = false }
  local b <close> = orrery.simulation{ bodies = bodies, backend = "cpu",
    kernel = { block = 256, threads = 1 } }
  local k = b.config
  T.eq(k.block, 256, "block"); T.eq(k.threads, 1, "threads"); T.eq(k.source, "given", "source")
  T.eq(#k.ranks, 1, "one rank listed"); T.eq(k.ranks[1].block, 256, "the rank's block")
  T.eq(k.ranks[1].first, 0, "slice start"); T.eq(k.ranks[1].count, 300, "slice length")
  T.ok(a.config.block ~= 256, "the default differs")
  a:step(5); b:step(5)
  -- another tile length sums in another order: close, not equal
  local worst = 0
  for i = 1, 300 do
    local p, q = a:body(i), b:body(i)
    worst = math.max(worst, math.abs(p.x - q.x), math.abs(p.vx - q.vx))
  end
  T.ok(worst < 1e-5, ("tile lengths 1024 and 256 agree to 1e-5 (%.2e)"):format(worst))
end)

T.test("sim:cluster: Lagrangian radii, the Casertano & Hut core, t_rh", function()
  local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 20000, seed = 3 },
    backend = "cpu", precision = "double" }
  local c = sim:cluster{ fractions = { 0.1, 0.5, 0.9 } }
  T.eq(c.n, 20000); T.near(c.mass, 1, 1e-9, "mass")
  T.eq(#c.lagrangian, 3); T.eq(c.fractions[2], 0.5); T.eq(c.lagrangian[2], c.r_half)
  -- Plummer: r(f) / r(1/2) from M(r) = M r^3 / (r^2 + a^2)^(3/2), the mass cut at 0.999
  local function model(f) return 1 / math.sqrt((0.999 * f) ^ (-2 / 3) - 1) end
  T.near(c.lagrangian[1] / c.r_half, model(0.1) / model(0.5), 0.02, "r_10% / r_h")
  T.near(c.lagrangian[3] / c.r_half, model(0.9) / model(0.5), 0.06, "r_90% / r_h")
  T.ok(c.core_radius > 0.2 * c.r_half and c.core_radius < c.r_half, "core inside r_h")
  local n, m = 20000, 1 / 20000
  T.near(c.t_rh, 0.138 * math.sqrt(n) * c.r_half ^ 1.5 / (math.sqrt(m) * math.log(0.11 * n)),
    1e-9 * c.t_rh, "Spitzer's t_rh")
  local d = sim:cluster{ about = "mass", k = 12 }
  T.eq(#d.lagrangian, 7, "the default fractions")
  T.raises("sim:cluster: mass fraction 2 is 1.5: fractions must be in (0, 1]", sim.cluster, sim,
    { fractions = { 0.5, 1.5 } })
  T.raises("sim:cluster: 'about' must be \"density\" or \"mass\" (got \"x\")", sim.cluster, sim,
    { about = "x" })
  T.raises("sim:cluster: unknown key 'k2' (valid: fractions, k, about, gamma)", sim.cluster, sim,
    { k2 = 3 })
  T.raises("sim:run: 'cluster' must be true or a list of mass fractions in (0, 1] (got table)",
    sim.run, sim, { steps = 1, cluster = { 2 } })
end)

T.done()
