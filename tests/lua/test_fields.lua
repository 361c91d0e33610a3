-- test_fields: external fields from Lua: the built-in fields (listed, each
-- passing field:check, each's Hermite orbit converging at 4th order as eta
-- shrinks: its jerk is right), a field from a potential expression and from
-- C snippets, orbits (a Kepler ellipse closing, energy conserved with the
-- field's part in sim:energy().external), runtime and baked params
-- ("FIELD.PARAM"), a field that depends on time, milky_way's units, and the
-- exact errors for bad input (a syntax error, an unknown name or param, a
-- field without a potential where energies are asked for), nothing
-- compiled then.  CPU backend, double.
local T = dofile(arg[0]:match("^(.*/)") .. "testlib.lua")
local orrery = require "orrery"

local function one(field, body, opts)
  local o = { n = 1, precision = "double", softening = 0, backend = "cpu", fields = { field },
              integrator = "yoshida4" }
  for k, v in pairs(opts or {}) do o[k] = v end
  if o.integrator ~= "hermite" then o.dt = o.dt or 1e-3 end
  local sim = orrery.simulation(o)
  sim:set_body(1, body)
  return sim
end

local function dist(a, b)
  return math.sqrt((a.x - b.x) ^ 2 + (a.y - b.y) ^ 2 + (a.z - b.z) ^ 2)
end

T.test("built-in fields are listed, inspectable and pass field:check", function()
  T.eq(table.concat(orrery.fields, ","), "hernquist,logarithmic,milky_way,miyamoto_nagai,nfw," ..
    "plummer,point_mass,powerlaw_cutoff")
  for _, name in ipairs(orrery.fields) do
    local f = orrery.field(name)
    T.eq(f.name, name); T.eq(f.builtin, true); T.eq(f.origin, "fields/" .. name .. ".h")
    T.ok(#f.expr > 0 and f.accel:match("ax = ") and f.jerk:match("jz = "), name)
    local r = f:check{ rmin = 0.02, rmax = 50 }
    T.ok(r.ok, name .. ": " .. r.message)
    T.ok(r.compared >= 35 and r.accel.checked and r.jerk.checked, name)
    T.ok(r.accel.max_rel < 1e-7 and r.jerk.max_rel < 1e-6,
      ("%s: %g %g"):format(name, r.accel.max_rel, r.jerk.max_rel))
  end
  T.eq(orrery.field("plummer", { b = 0.5 }).params.b, 0.5)
  T.eq(orrery.field{ base = "plummer", name = "core", params = { M = 3 } }.params.M, 3)
end)

T.test("a Kepler ellipse in point_mass closes after one period", function()
  local sim <close> = one("point_mass", { x = 1, y = 0, z = 0, vx = 0, vy = 1.2, vz = 0, m = 1 })
  local e0 = sim:energy()
  T.near(e0.external, -1, 1e-15); T.near(e0.potential, -1, 1e-15); T.near(e0.kinetic, 0.72, 1e-15)
  local a = 1 / (2 - 1.2 ^ 2)            -- vis-viva, G M = 1
  sim:advance(2 * math.pi * a ^ 1.5)
  local b, e1 = sim:body(1), sim:energy()
  T.ok(dist(b, { x = 1, y = 0, z = 0 }) < 1e-9, "closes: " .. dist(b, { x = 1, y = 0, z = 0 }))
  T.ok(math.abs(e1.total - e0.total) < 1e-11, "energy " .. (e1.total - e0.total))
end)

T.test("a field from an expression, and one from C snippets, give the same orbit", function()
  local expr = orrery.field{ name = "halo", params = { v0 = 1, rc = 0.3 },
                             potential = "v0^2/2*log(r2 + rc^2)" }
  local code = orrery.field{ name = "halo", params = { v0 = 1, rc = 0.3 },
    accel = [[
      const real k = -v0 * v0 / (r2 + rc * rc);
      ax = k * x; ay = k * y; az = k * z;
    ]],
    potential = "phi = v0 * v0 / 2 * orr_log(r2 + rc * rc);",
    jerk = [[
      const real w = r2 + rc * rc, xv = x * vx + y * vy + z * vz;
      jx = k * vx + 2 * v0 * v0 * xv * x / (w * w);
      jy = k * vy + 2 * v0 * v0 * xv * y / (w * w);
      jz = k * vz + 2 * v0 * v0 * xv * z / (w * w);
    ]] }
  T.ok(code:check().ok, code:check().message)
  local body = { x = 1, y = 0.2, z = 0.1, vx = 0.1, vy = 0.8, vz = 0.2, m = 1 }
  local a <close> = one(expr, body, { integrator = "hermite", dt_max = 1 / 16, eta = 0.005 })
  local b <close> = one(code, body, { integrator = "hermite", dt_max = 1 / 16, eta = 0.005 })
  a:advance(5); b:advance(5)
  T.ok(dist(a:body(1), b:body(1)) < 1e-12, "same orbit: " .. dist(a:body(1), b:body(1)))
end)

T.test("runtime params change without a recompile, baked ones recompile", function()
  local f = orrery.field{ name = "kep", params = { M = 1, soft = 0.1 }, runtime_params = { "M" },
                          potential = "-G*M/sqrt(r2 + soft^2)" }
  local sim <close> = one(f, { x = 2, y = 0, z = 0, vx = 0, vy = 0, vz = 0, m = 1 })
  local u1 = sim:energy().external
  T.eq(sim:set_param("kep.M", 3), false)
  T.eq(sim:param("kep.M"), 3); T.eq(sim:params()["kep.soft"], 0.1)
  T.near(sim:energy().external, 3 * u1, 1e-14)
  T.eq(sim:set_param("kep.soft", 0), true)
  T.near(sim:energy().external, -1.5, 1e-15)
  sim:step(10)   -- the new M accelerates the body: x = 2 - (3/4) t^2 / 2
  T.near(sim:body(1).x, 2 - 0.75 * 0.01 ^ 2 / 2, 1e-9)
  local ok, e = pcall(sim.set_param, sim, "kep.q", 1)
  T.ok(not ok and e:match("test_fields.lua:%d+: sim:set_param: field 'kep' has no param 'q' " ..
    "%(params: M, soft%)"), e)
  ok, e = pcall(sim.set_param, sim, "nope.M", 1)
  T.ok(not ok and e:match("no field called 'nope' %(fields: kep%)"), e)
end)

T.test("a field that depends on time: leapfrog, yoshida4 and hermite agree", function()
  local f = orrery.field{ name = "grow", params = { M = 1, tau = 2 },
                          potential = "-G*M*(1 + t/tau)/sqrt(r2 + 0.01)" }
  T.ok(f:check().ok, f:check().message)
  local body = { x = 1, y = 0, z = 0, vx = 0, vy = 1, vz = 0.1, m = 1 }
  local ends = {}
  for _, o in ipairs{ { integrator = "leapfrog", dt = 1e-4 }, { integrator = "yoshida4", dt = 1e-3 },
                      { integrator = "hermite", dt_max = 1 / 16, eta = 0.001 } } do
    local sim <close> = one(f, body, o)
    sim:advance(3)
    ends[#ends + 1] = sim:body(1)
  end
  T.ok(dist(ends[1], ends[2]) < 1e-6, "leapfrog vs yoshida4 " .. dist(ends[1], ends[2]))
  T.ok(dist(ends[2], ends[3]) < 1e-6, "yoshida4 vs hermite " .. dist(ends[2], ends[3]))
  -- the field's grown: the orbit differs from the static field's
  local s <close> = one(orrery.field{ name = "still", params = { M = 1 },
                                      potential = "-G*M/sqrt(r2 + 0.01)" }, body)
  s:advance(3)
  T.ok(dist(s:body(1), ends[2]) > 0.1, "time matters")
end)

-- 4th order: steps about sqrt(eta) (eta inside the square root), so eta / 4
-- halves them and the error should fall 16x; at least 8x is asked.
T.test("Hermite orbits in each built-in field converge at 4th order as eta shrinks", function()
  local start = {   -- a bound orbit in each (its own scale)
    point_mass = { 1, 0, 0.1, 0, 1.1, 0.1 }, plummer = { 1, 0, 0.2, 0.1, 0.6, 0.1 },
    hernquist = { 1, 0, 0.2, 0.1, 0.5, 0.1 }, nfw = { 1, 0, 0.2, 0.1, 0.5, 0.1 },
    miyamoto_nagai = { 1, 0, 0.1, 0.05, 0.7, 0.05 }, logarithmic = { 1, 0, 0.2, 0.1, 0.9, 0.1 },
    powerlaw_cutoff = { 1, 0, 0.2, 0.1, 1.2, 0.1 }, milky_way = { 1, 0, 0.02, 0.05, 1.05, 0.05 },
  }
  for _, name in ipairs(orrery.fields) do
    local s = start[name]
    local body = { x = s[1], y = s[2], z = s[3], vx = s[4], vy = s[5], vz = s[6], m = 1 }
    local ref <close> = one(name, body, { dt = 1e-3 })
    ref:advance(4)
    local err = {}
    for k, eta in ipairs{ 0.04, 0.01 } do
      local sim <close> = one(name, body, { integrator = "hermite", dt_max = 1 / 2, eta = eta })
      sim:advance(4)
      err[k] = dist(sim:body(1), ref:body(1))
    end
    print(("  %s: hermite errors %.3g at eta 0.04, %.3g at 0.01 (%.1fx)"):format(name, err[1],
      err[2], err[1] / err[2]))
    T.ok(err[1] / err[2] > 8 and err[2] < 1e-4,
      ("%s: errors %.3g at eta 0.04, %.3g at 0.01 (%.1fx)"):format(name, err[1], err[2],
        err[1] / err[2]))
  end
end)

T.test("milky_way in physical units: 220 km/s at 8 kpc", function()
  -- kpc, Msun and G so that the velocity unit is 1 km/s
  local G = 6.67430e-8 * (1.3271244e26 / 6.67430e-8) / (3.0856775814913673e21 * 1e10)
  -- a circular orbit at 220 km/s stays at 8 kpc (a circular velocity off by
  -- 1e-5 would move it by 3e-4 kpc in a quarter turn)
  local sim <close> = one("milky_way", { x = 8, y = 0, z = 0, vx = 0, vy = 220, vz = 0, m = 1 },
    { G = G, units = { length = "kpc", mass = "Msun" }, dt = 1e-4 })
  T.near(sim:param("milky_way.ro"), 8, 1e-15); T.near(sim:param("milky_way.vo"), 220, 1e-14)
  sim:advance(8 / 220 * math.pi / 2)
  local b = sim:body(1)
  T.ok(math.abs(math.sqrt(b.x ^ 2 + b.y ^ 2) - 8) < 1e-8 and b.y > 7.99,
    ("r = %.12g"):format(math.sqrt(b.x ^ 2 + b.y ^ 2)))
  -- N-body units: galpy's natural ones (R0 = 1, v_c = 1)
  local nat <close> = one("milky_way", { x = 1, y = 0, z = 0, vx = 0, vy = 1, vz = 0, m = 1 },
    { dt = 1e-3 })
  T.eq(nat:param("milky_way.ro"), 1)
  nat:advance(math.pi / 2)
  b = nat:body(1)
  T.ok(math.abs(math.sqrt(b.x ^ 2 + b.y ^ 2) - 1) < 1e-9, ("r = %.12g"):format(b.x))
end)

T.test("bad input: clear errors at the script's line and the expression's place", function()
  local function fails(pattern, fn)
    local ok, e = pcall(fn)
    T.ok(not ok, "expected an error matching " .. pattern)
    T.ok(tostring(e):match(pattern), tostring(e))
  end
  fails("^[^:]*test_fields.lua:%d+: orrery.field: field 'bad': potential:1:9: unknown name " ..
        "'rr' %(the names: x, y, z, t, r, r2, G",
        function() orrery.field{ name = "bad", potential = "-G/(1 + rr)" } end)
  fails("test_fields.lua:%d+: orrery.field: field 'bad': potential:1:5: expected '%)' to close " ..
        "the '%(' at column 1", function() orrery.field{ name = "bad", potential = "(1+r" } end)
  fails("test_fields.lua:%d+: orrery.field: field 'bad': potential:2:3: unexpected '%$'",
        function() orrery.field{ name = "bad", potential = "1/r\n+ $" } end)
  fails("test_fields.lua:%d+: orrery.field: field 'plummer' has no param 'q' %(params: M, b%)",
        function() orrery.field("plummer", { q = 1 }) end)
  fails("test_fields.lua:%d+: orrery.field: unknown field 'bulge' %(built in: hernquist, ",
        function() orrery.field("bulge") end)
  fails("test_fields.lua:%d+: orrery.field: field 'b': invalid param name 'x': it is a variable already " ..
        "in scope", function() orrery.field{ name = "b", params = { x = 1 }, potential = "x" } end)
  fails("test_fields.lua:%d+: orrery.field: field 'b': invalid param name 'oax': it is a variable " ..
        "already in scope", function() orrery.field{ name = "b", params = { oax = 1 }, potential = "oax" } end)
  -- the pair snippets' own names (dx, f, g, mi, ...) are free in a field
  for _, nm in ipairs{ "g", "dx", "f", "mi", "u", "eps" } do
    local w = orrery.field{ name = "w", params = { [nm] = 0.5 }, potential = nm .. "*r2" }
    local sim <close> = orrery.simulation{ n = 1, backend = "cpu", precision = "double", fields = { w },
                                           dt = 0.01 }
    sim:set_body(1, { x = 1, m = 0 })
    sim:step(1)
    T.near(sim:body(1).vx, -0.01, 1e-6, nm)   -- a = -2 * 0.5 * x
  end
  fails("potential:1:10: the first argument of gammainc %(its order s%) must be a constant",
        function() orrery.field{ name = "g", params = { s = 1 }, runtime_params = { "s" },
                                 potential = "gammainc(s, r2)" } end)
  fails("test_fields.lua:%d+: orrery.field: [^ ]*test_fields.lua:%d+ %(field 'c', accel%):1: '}' " ..
        "without a matching '{'", function() orrery.field{ name = "c", accel = "ax = 1; }" } end)
  fails("test_fields.lua:%d+: orrery.simulation: two fields are called 'plummer'",
        function() orrery.simulation{ n = 1, backend = "cpu", fields = { "plummer", "plummer" } } end)
  -- a field without a potential: it runs, but energies are refused, naming it
  local push = orrery.field{ name = "push", accel = "ax = 1;" }
  local sim <close> = one(push, { x = 0, y = 0, z = 0, vx = 0, vy = 0, vz = 0, m = 1 })
  sim:step(1)
  fails("test_fields.lua:%d+: field 'push' %(defined at [^)]*test_fields.lua:%d+%) has no " ..
        "potential snippet: the energy is not defined", function() sim:energy() end)
  -- a checkpoint carries a field of snippets alone, and goes on with it
  local ckp = (os.getenv("TEST_TMP") or "/tmp") .. "/fields.ckpt.hdf5"
  sim:checkpoint(ckp)
  local back <close> = orrery.restore(ckp)
  back:step(2); sim:step(2)
  T.same_bodies(sim, back, "push restored")
  os.remove(ckp)
  fails("test_fields.lua:%d+: orrery.simulation: field 'push' has no jerk: the Hermite " ..
        "integrator needs one", function() one(push, { m = 1 }, { integrator = "hermite" }) end)
end)

-- what a user met (the breaker round of 2026-11-26), each now right
T.test("user cases: the plane, a map of fields, checkpoints asked for, checks near a core", function()
  local function fails(pattern, fn)
    local ok, e = pcall(fn)
    T.ok(not ok, "expected an error matching " .. pattern)
    T.ok(tostring(e):match(pattern), tostring(e))
  end
  -- dims = 2: a field pulling along z moves nothing out of the plane
  for _, integ in ipairs{ "leapfrog", "yoshida4", "hermite" } do
    local s <close> = orrery.simulation{ dims = 2, precision = "double", backend = "cpu",
      integrator = integ, fields = { orrery.field{ name = "tilt", potential = "-z - 0.5*x*x" } },
      bodies = { { x = 1, m = 1 }, { x = -3, m = 1e-9 } } }
    s:advance(1)
    local b = s:body(1)
    T.eq(b.z, 0, integ); T.eq(b.vz, 0, integ)
    T.near(b.x, math.cosh(1), 1e-5, integ)   -- x'' = x: the field's x still acts
  end
  -- fields as a map is refused, naming the key
  fails("test_fields.lua:%d+: orrery.simulation: 'fields' must be a list of fields %(orrery.field " ..
        "values or built%-in names%), not a table with the key \"plummer\"",
        function() orrery.simulation{ n = 1, backend = "cpu", fields = { plummer = { M = 5 } } } end)
  -- sim.fields names them; checkpoints carry them (and restore them)
  local s <close> = orrery.simulation{ backend = "cpu", fields = { "plummer", "nfw" },
    bodies = orrery.ic.plummer{ n = 16, seed = 2 } }
  T.eq(table.concat(s.fields, ","), "plummer,nfw")
  local ck = os.tmpname() .. ".hdf5"
  s:run{ steps = 10, checkpoint_every = 5, checkpoint = ck, progress = false }
  local r <close> = orrery.restore(ck)
  T.eq(table.concat(r.fields, ","), "plummer,nfw")
  T.eq(r.steps, 10)
  os.remove(ck)
  -- field:check: no false alarm where r is far inside a core (the differences' rounding),
  -- a missing acceleration named as such, a return refused at definition
  for _, f in ipairs{ orrery.field("plummer", { b = 100 }), orrery.field("logarithmic", { rc = 100 }),
                      orrery.field{ name = "q", potential = "0.5*x*x + 100" } } do
    local r = f:check{}
    T.ok(r.ok and r.compared >= 35, f.name .. ": " .. r.message)
  end
  local r = orrery.field{ name = "z0", accel = "ax = 0;", potential = "phi = 0.5*r2;" }:check{}
  T.ok(not r.ok and r.message:match("^field 'z0': the accel snippet's a disagrees with %-grad " ..
    "Phi of the potential snippet by 1 "), r.message)
  fails("test_fields.lua:%d+: orrery.field: [^ ]*test_fields.lua:%d+ %(field 'spring', accel%):1: " ..
        "'return' in a snippet would skip the code orrery puts after it",
        function() orrery.field{ name = "spring", accel = "ax = -x; ay = -y; az = -z; return;",
                                 potential = "phi = 0.5*r2;" } end)
  -- a snippet that does not compile: the field is named, not the law
  local bad = orrery.field{ name = "bad", params = { k = 1 }, accel = "ax = -k*x;\nay = -k*y\naz = -k*z;" }
  fails("test_fields.lua:%d+: orrery.simulation: field 'bad' %(defined at [^)]*test_fields.lua:%d+%): " ..
        "host C compiler failed", function() orrery.simulation{ n = 1, backend = "cpu", fields = { bad } } end)
  -- a field and a law are values: setting a part says so
  fails("test_fields.lua:%d+: orrery.Field: field 'q' cannot be changed %(\"potential\"%)",
        function() local f = orrery.field{ name = "q", potential = "x" }; f.potential = "y" end)
  fails("test_fields.lua:%d+: orrery.Force: force law 'gravity' cannot be changed %(\"pair\"%)",
        function() local g = orrery.force("gravity"); g.pair = "f = 0;" end)
  -- a blow-up at a field's singularity says a field may be why
  local c <close> = orrery.simulation{ backend = "cpu",
    fields = { orrery.field{ name = "cusp", potential = "sqrt(r)" } },
    bodies = { { x = 1, m = 1 }, { x = 2, m = 1 }, { x = 0, m = 1 } } }
  fails("an external field singular where a body is", function() c:step(1) end)
end)

T.done()
