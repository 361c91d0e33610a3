-- test_forces: force laws from Lua: orrery.force{} (user laws and laws
-- derived from a built-in), the orrery.Force fields, simulation{force=,
-- params=}, sim:set_param (runtime: no recompile; baked: recompile),
-- attributes (set_attribute, attribute, sim.attr buffers), sim:verify, a law
-- script for --force, and the exact errors for bad definitions and snippets
-- (checked before compiling, at the snippet's line); laws from a directory
-- named odd* and params named after predefined macros.
-- CPU backend, small N.
local T = dofile(arg[0]:match("^(.*/)") .. "testlib.lua")
local orrery = require "orrery"

local GRAV_PAIR = "f = mj * orr_rsqrt3_nz(r2);"
local GRAV_POT = "u = -(mi * mj) * orr_rsqrt_nz(r2);"

local function screened(extra)
  local spec = {
    name = "screened", params = { lambda = 0.5, k = 1.0 }, runtime_params = { "k" },
    attributes = { "charge" }, scale = "k",
    pair = [[
real inv = orr_rsqrt_nz(r2), r = r2 * inv;
f = -(charge_i / mi) * charge_j * orr_exp(-r / lambda) * (1 + r / lambda) * (inv * inv * inv);
]],
    potential = [[
real inv = orr_rsqrt_nz(r2);
u = charge_i * charge_j * orr_exp(-r2 * inv / lambda) * inv;
]],
  }
  for k, v in pairs(extra or {}) do spec[k] = v end
  return orrery.force(spec)
end

T.test("built-in laws are listed and inspectable", function()
  T.eq(table.concat(orrery.forces, ","), "coulomb,gravity,gravity_spline,lennard_jones,yukawa")
  local lj = orrery.force("lennard_jones")
  T.eq(lj.name, "lennard_jones"); T.eq(lj.builtin, true)
  T.eq(lj.params.sigma, 1); T.eq(lj.params.cutoff, 2.5)
  T.eq(#lj.attributes, 0)
  T.eq(orrery.force("coulomb").attributes[1], "charge")
  T.eq(orrery.force("gravity").scale, "G")
  T.ok(tostring(lj):match("^orrery.Force %(lennard_jones; "), tostring(lj))
end)

T.test("a user copy of gravity is bitwise the built-in", function()
  local line = debug.getinfo(1, "l").currentline + 1
  local g = orrery.force{ name = "mygrav", scale = "G", finite_at_zero = true,
    pair = GRAV_PAIR, potential = GRAV_POT }
  T.eq(g.origin, arg[0] .. ":" .. line)
  T.eq(g.builtin, false)
  local ic = orrery.ic.plummer{ n = 300, seed = 11 }
  local a <close> = orrery.simulation{ n = 300, force = g, backend = "cpu" }
  local b <close> = orrery.simulation{ n = 300, backend = "cpu" }
  T.eq(a.force, "mygrav")
  a:load(ic); b:load(ic)
  a:step(4); b:step(4)
  for i = 1, 300 do
    local p, q = a.pos[i], b.pos[i]
    for k = 1, 3 do T.eq(p[k], q[k], "body " .. i) end
  end
  T.eq(a:energy().potential, b:energy().potential)
end)

T.test("runtime params, baked params and attributes", function()
  local law = screened()
  T.eq(law.runtime_params[1], "k")
  local sim <close> = orrery.simulation{ n = 50, force = law, backend = "cpu", precision = "double" }
  sim:load(orrery.ic.uniform_cube{ n = 50, seed = 5, side = 4 })
  local q = {}
  for i = 1, 50 do q[i] = (i % 2 == 0 and 1 or -1) * (0.5 + i / 100) end
  sim:set_attribute("charge", q)
  T.eq(sim:attribute("charge", 7), q[7])
  T.eq(sim.attr.charge[8], q[8]); T.eq(#sim.attr.charge, 50)
  sim.attr.charge[8] = 2.5
  T.eq(sim:attribute("charge")[8], 2.5)
  sim:set_attribute("charge", 8, q[8])
  local u1 = sim:energy().potential
  T.ok(u1 ~= 0, "charges interact")
  T.eq(sim:set_param("k", 2), false, "runtime: no recompile")
  T.eq(sim:energy().potential, 2 * u1)
  T.eq(sim:param("k"), 2)
  T.eq(sim:set_param("lambda", 1.5), true, "baked: recompiled")
  T.eq(sim:params().lambda, 1.5)
  T.ok(math.abs(sim:energy().potential) > math.abs(2 * u1), "longer screening, more energy")
  T.eq(sim:attribute("charge", 8), q[8], "attributes survive the rebuild")
  local e, n = sim:verify()
  T.ok(e < 1e-12, "double CPU verifies against itself: " .. e); T.eq(n, 50)
end)

T.test("simulation params override a law's values", function()
  local sim <close> = orrery.simulation{ n = 8, force = "yukawa", params = { lambda = 3 },
    backend = "cpu" }
  T.eq(sim:param("lambda"), 3)
  local derived = orrery.force{ base = "lennard_jones", name = "argon",
    params = { sigma = 3.4, epsilon = 0.997 }, runtime_params = { "epsilon" } }
  T.eq(derived.name, "argon"); T.eq(derived.params.sigma, 3.4)
  T.eq(derived.runtime_params[1], "epsilon")
  local s2 <close> = orrery.simulation{ n = 8, force = derived, backend = "cpu" }
  T.eq(s2:set_param("epsilon", 1.1), false)
end)

T.test("verify: float CPU against double", function()
  local sim <close> = orrery.simulation{ n = 400, force = "coulomb", backend = "cpu",
    softening = 0.05 }
  sim:load(orrery.ic.uniform_cube{ n = 400, seed = 9 })
  for i = 1, 400 do sim:set_attribute("charge", i, i % 2 == 0 and 1 or -1) end
  local e, n, tol = sim:verify{ sample = 100 }
  T.eq(n, 100); T.eq(tol, 1e-5)
  T.ok(e > 0 and e < 1e-5, "float error " .. e)
end)

T.test("law:check: the snippets against each other", function()
  -- a built-in law with an attribute (values given), softened
  local r = orrery.force("coulomb"):check{ eps = 0.05, attributes = { charge = { -1.5, 0.5 } } }
  T.ok(r.ok, r.message); T.eq(r.message, ""); T.eq(r.compared, 41); T.eq(r.skipped, 0)
  T.ok(r.force.checked and not r.jerk.checked, "coulomb: force checked, no jerk")
  T.ok(r.force.max_rel < 1e-8, "coulomb force " .. r.force.max_rel)
  -- a power law whose jerk is twice the true one (issue 28's example)
  local power = orrery.force{ name = "power", params = { p = 2.5 },
    pair = "f = mj * orr_pow(r2, -p / 2 - 1);",
    potential = "u = -mi * mj / p * orr_pow(r2, -p / 2);",
    jerk = "g = (-p / 2 - 1) * f / r2 * 2;" }
  r = power:check{ samples = 9, rmin = 0.1, rmax = 10 }
  T.ok(not r.ok, "the doubled jerk fails")
  T.eq(r.compared, 9)
  T.near(r.jerk.value / r.jerk.fd, 2, 1e-6, "the jerk's ratio")
  T.ok(r.force.max_rel < 1e-8, "its force is right: " .. r.force.max_rel)
  T.ok(r.message:find("force law 'power': the jerk snippet's g disagrees with df/d(d2) of the pair snippet by 0.5 (relative) at r = ", 1, true),
    r.message)
  -- options are checked, naming the key
  T.raises("law:check: unknown key 'eta' (valid: eps, G, mi, mj, attributes, rmin, rmax, samples, tol)",
    power.check, power, { eta = 1 })
  T.raises("law:check: 'samples' must be an integer from 3 to 10000 (got 2)", power.check, power,
    { samples = 2 })
  T.raises("law:check: force law 'power' has no attribute \"charge\"", power.check, power,
    { attributes = { charge = { 1, 2 } } })
  T.raises("law:check: the masses must be positive and finite (got -1 and 1.7)", power.check,
    power, { mi = -1 })
  local coul = orrery.force("coulomb")
  T.raises("law:check: 'attributes' must be a table {name = {value_i, value_j}} (got 5)",
    coul.check, coul, { attributes = 5 })
  T.raises("law:check: attribute 'charge' must be {value_i, value_j} (got a table of 3 values)",
    coul.check, coul, { attributes = { charge = { 1, 2, 3 } } })
  T.raises("orrery.force: force law 'k': runtime param 'k' is not one of its params",
    orrery.force, { name = "k", runtime_params = { "k" }, energy = "k/r" })
end)

T.test("laws from an energy: the snippets made, runs, errors at their place", function()
  local eg = orrery.force{ name = "egrav", energy = "-mi*mj/r", scale = "G", finite_at_zero = true }
  T.ok(eg.pair:find("f = ", 1, true) and eg.potential:find("u = ", 1, true)
    and eg.jerk:find("g = ", 1, true), "three snippets made")
  T.ok(eg.pair:find("orr_rsqrt3_nz(r2)", 1, true), "a power of r2 as rsqrt3: " .. eg.pair)
  -- the same run as the built-in gravity, Hermite block steps on the CPU, in double
  local function run(force)
    local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 128, seed = 5 },
      force = force, backend = "cpu", precision = "double", integrator = "hermite",
      dt_max = 1 / 16, eta = 0.02, softening = 0.02, G = 1.5 }
    sim:run{ steps = 2, progress = false }
    return sim:energy().total, sim.blocks.blocks, sim:body(7).x
  end
  local e1, b1, x1 = run("gravity")
  local e2, b2, x2 = run(eg)
  T.eq(b2, b1, "the same blocks")
  T.near(e2, e1, 1e-12, "the same energy"); T.near(x2, x1, 1e-12, "the same body")
  -- an intermediate value, params and attributes
  local screened = orrery.force{ name = "escreened", params = { lambda = 0.7 },
    attributes = { "charge" }, energy = "charge_i*charge_j*exp(-x)/r; x = r/lambda" }
  T.ok(screened:check{ eps = 0.01, attributes = { charge = { 1, -2 } } }.ok, "its check")
  T.raises("^orrery.force: force law 'bad': energy:1:8: unknown name 'rr' ", orrery.force,
    { name = "bad", energy = "-mi*mj/rr" })
  T.raises("orrery.force: force law 'bad': energy:1:1: function 'min' takes 2 arguments (got 1)",
    orrery.force, { name = "bad", energy = "min(r)" })
  T.raises("orrery.force: 'energy' cannot be combined with 'pair' (the law's code is made from the energy)",
    orrery.force, { name = "bad", energy = "1/r", pair = "f = 0;" })
  T.raises("orrery.force: 'energy' cannot be combined with 'base' (the law's code is made from the energy)",
    orrery.force, { base = "gravity", energy = "1/r" })
end)

T.test("a law script for --force", function()
  local path = os.getenv("TEST_TMP") .. "/law.lua"
  local f = assert(io.open(path, "w"))
  f:write('local orrery = require "orrery"\nreturn orrery.force{ name = "plummerish", scale = "G",\n',
    string.format("pair = %q, potential = %q }\n", GRAV_PAIR, GRAV_POT))
  f:close()
  T.eq(dofile(path).name, "plummerish")
end)

T.test("definition errors", function()
  local W = "orrery.force: "
  T.raises(W .. "'name' is required (or 'base', a built-in law to start from)",
    orrery.force, { pair = "f = 0;" })
  T.raises(W .. "'pair' is required: C code that sets f, the acceleration of body i being scale * f * (x_j - x_i) (or 'energy': an expression of r)",
    orrery.force, { name = "x" })
  T.raises(W .. "force law 'x': invalid param name 'r2': it is a variable, keyword or function already in scope in the snippets",
    orrery.force, { name = "x", pair = "f = 0;", params = { r2 = 1 } })
  T.raises(W .. "param 'a' must be a finite number (got nan)",
    orrery.force, { name = "x", pair = "f = 0;", params = { a = 0 / 0 } })
  T.raises(W .. "param 'a' must be a finite number (got \"1\")",
    orrery.force, { name = "x", pair = "f = 0;", params = { a = "1" } })
  T.raises(W .. "force law 'x': runtime param 'b' is not one of its params",
    orrery.force, { name = "x", pair = "f = 0;", params = { a = 1 }, runtime_params = { "b" } })
  T.raises(W .. "force law 'x': attribute 'mass' is defined twice",
    orrery.force, { name = "x", pair = "f = 0;", attributes = { "mass", "mass" } })
  T.raises(W .. "'pair' cannot be combined with 'base' (a law derived from 'coulomb' keeps its code)",
    orrery.force, { base = "coulomb", pair = "f = 0;" })
  T.raises(W .. "unknown key 'pairs' (valid: name, base, doc, params, runtime_params, attributes, pair, potential, scale, finite_at_zero, jerk, energy)",
    orrery.force, { name = "x", pairs = "f = 0;" })
  T.raises(W .. "force law 'coulomb' has no param 'q' (params: k)",
    orrery.force, { base = "coulomb", params = { q = 1 } })
  T.raises("orrery.simulation: force law 'yukawa' has no param 'mu' (params: lambda)",
    orrery.simulation, { n = 4, force = "yukawa", params = { mu = 1 }, backend = "cpu" })
end)

T.test("use errors", function()
  local sim <close> = orrery.simulation{ n = 4, force = "coulomb", backend = "cpu" }
  T.raises("bad argument #1 to 'set_attribute' (force law 'coulomb' has no attribute 'spin' (attributes: charge))",
    function() sim:set_attribute("spin", 1, 1) end)
  T.raises("bad argument #2 to 'set_attribute' (index 5 out of range 1..4)",
    function() sim:set_attribute("charge", 5, 1) end)
  T.raises("bad argument #2 to 'set_attribute' (4 values expected (one per body), got 3)",
    function() sim:set_attribute("charge", { 1, 2, 3 }) end)
  T.raises("sim:set_param: force law 'coulomb' has no param 'kk' (params: k)",
    function() sim:set_param("kk", 1) end)
  local plain <close> = orrery.simulation{ n = 4, backend = "cpu" }
  T.eq(next(plain.attr), nil)
  T.raises("bad argument #1 to 'attribute' (force law 'gravity' has no attribute 'charge' (attributes: none))",
    function() plain:attribute("charge", 1) end)
end)

T.test("checkpoints carry the law, its params and attributes", function()
  local law = screened()
  local function make()
    local s = orrery.simulation{ n = 120, force = law, backend = "cpu" }
    s:load(orrery.ic.uniform_cube{ n = 120, seed = 3, side = 3 })
    for i = 1, 120 do s:set_attribute("charge", i, (i % 2 == 0 and 1 or -1) * (0.5 + i / 240)) end
    s:set_param("k", 1.5)
    return s
  end
  local a <close> = make()
  a:step(5)
  local path = os.getenv("TEST_TMP") .. "/law.ckpt.hdf5"
  a:checkpoint(path)
  a:step(7)
  local b <close> = orrery.restore(path)
  T.eq(b.force, "screened"); T.eq(b:param("k"), 1.5); T.eq(b:param("lambda"), 0.5)
  T.eq(b:attribute("charge", 3), a:attribute("charge", 3))
  b:step(7)
  for i = 1, 120 do
    local p, q = a.pos[i], b.pos[i]
    for k = 1, 3 do T.eq(p[k], q[k], "body " .. i) end
  end
  T.eq(b:set_param("k", 2), false, "still a runtime param")
  local snap = os.getenv("TEST_TMP") .. "/law_snap.hdf5"
  a:write(snap)
  local bodies, extra = orrery.read(snap)
  T.eq(extra.charge[3], a:attribute("charge", 3), "one dataset per attribute")
end)

T.test("a snippet that does not compile names the definition and the snippet line", function()
  local bad = orrery.force{ name = "broken", pair = "real x = r2;\nf = x *;\n" }
  local line = debug.getinfo(1, "l").currentline - 1
  local ok, err = pcall(orrery.simulation, { n = 4, force = bad, backend = "cpu" })
  T.eq(ok, false)
  local where = arg[0] .. ":" .. line
  T.ok(err:find("orrery.simulation: force law 'broken' (defined at " .. where .. "): ", 1, true), err)
  T.ok(err:find(where .. " (force 'broken', pair):2:", 1, true), err)
  -- the script goes on: a good law still works
  local good <close> = orrery.simulation{ n = 4, force = screened(), backend = "cpu" }
  T.eq(good.force, "screened")
end)

-- positions of `law` after a few steps on the CPU equal the built-in gravity's
local function same_as_gravity(law, what)
  local ic = orrery.ic.plummer{ n = 200, seed = 17 }
  local a <close> = orrery.simulation{ n = 200, force = law, backend = "cpu" }
  local b <close> = orrery.simulation{ n = 200, backend = "cpu" }
  a:load(ic); b:load(ic)
  a:step(3); b:step(3)
  for i = 1, 200 do
    local p, q = a.pos[i], b.pos[i]
    for k = 1, 3 do T.eq(p[k], q[k], what .. ": body " .. i) end
  end
  local e, _, tol = a:verify()
  T.ok(e <= tol, what .. ": verify " .. e)
end

T.test("a law defined under a directory named odd* (paths go into the source escaped)", function()
  local dir = os.getenv("TEST_TMP") .. "/odd*"
  T.ok(os.execute("mkdir -p '" .. dir .. "'"))
  local path = dir .. '/my "law".lua'
  local f = assert(io.open(path, "w"))
  f:write('local orrery = require "orrery"\nreturn orrery.force{ name = "oddlaw", scale = "G",\n',
    string.format("finite_at_zero = true, pair = %q, potential = %q }\n", GRAV_PAIR, GRAV_POT))
  f:close()
  local law = dofile(path)
  T.eq(law.origin, path .. ":2")
  same_as_gravity(law, "odd*")
  -- a law from a string chunk: its name has quotes
  local chunk = load('return require("orrery").force{ name = "inline", scale = "G", ' ..
    'finite_at_zero = true, pair = "f = mj * orr_rsqrt3_nz(r2);" }')
  same_as_gravity(chunk(), "string chunk")
  -- a compiler error there names the path as it is
  f = assert(io.open(path, "w"))
  f:write('local orrery = require "orrery"\nreturn orrery.force{ name = "oddbad",\n',
    'pair = "real x = r2;\\nf = x *;" }\n')
  f:close()
  local ok, err = pcall(orrery.simulation, { n = 4, force = dofile(path), backend = "cpu" })
  T.eq(ok, false)
  T.ok(err:find(path .. ":2 (force 'oddbad', pair):2:", 1, true), err)
end)

T.test("params named after predefined macros (linux, M_PI, NAN) work on the CPU", function()
  local law = orrery.force{ name = "macros", scale = "G * (linux + unix + M_PI + NAN + INFINITY)",
    params = { linux = 1, unix = 0, M_PI = 0, NAN = 0, INFINITY = 0 }, runtime_params = { "M_PI" },
    finite_at_zero = true, pair = GRAV_PAIR, potential = GRAV_POT }
  same_as_gravity(law, "macros")
  T.raises("orrery.force: force law 'x': invalid param name 'and': it is a variable, keyword or function already in scope in the snippets",
    orrery.force, { name = "x", pair = "f = 0;", params = { ["and"] = 1 } })
end)

T.test("snippet errors are reported at the snippet's own line, before compiling", function()
  local function raises_at(want, spec)
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(orrery.force, spec)
    T.eq(ok, false)
    local where = arg[0] .. ":" .. line
    T.eq(err, where .. ": orrery.force: " .. where .. " (force 'b', " .. want)
  end
  raises_at("pair):2: '}' without a matching '{'", { name = "b", pair = "f = mj;\n}\n" })
  raises_at("pair):1: '{' is never closed", { name = "b", pair = "if (d2 > 0) {\n  f = mj;\n" })
  raises_at("pair):2: a /* comment is not closed", { name = "b", pair = "f = mj;\n/* f = 0;" })
  raises_at("pair):1: the last statement does not end with ';'", { name = "b", pair = "f = mj" })
  raises_at("pair):1: #include is not allowed in a snippet: what a snippet may use is in scope already (real, its variables, the orr_ math), and NVRTC has no system headers",
    { name = "b", pair = "#include <math.h>\nf = mj;" })
  raises_at("potential):1: #if without #endif in the snippet",
    { name = "b", pair = "f = mj;", potential = "#if 1\nu = 0;" })
  raises_at("scale):1: ')' without a matching '('", { name = "b", pair = "f = mj;", scale = "G)" })
  T.raises("orrery.force: 'scale' is too long (at most 255 characters)",
    orrery.force, { name = "b", pair = "f = mj;", scale = "G * (1" .. string.rep(" + 1", 80) .. ")" })
  -- a snippet's #define stays in it (`#define real int` leaked into the kernel)
  same_as_gravity(orrery.force{ name = "realint", scale = "G", finite_at_zero = true,
    pair = "#define real int\n" .. GRAV_PAIR, potential = GRAV_POT }, "#define real int")
end)

T.test("digraph directives (%:define, %:include) are directives to the checks too", function()
  -- both compilers read %: as # and <% %> <: :> as { } [ ]: `%:define real
  -- int` leaked out of its snippet (wrong numbers), %:include was compiled
  same_as_gravity(orrery.force{ name = "digraph", scale = "G", finite_at_zero = true,
    pair = "%:define real int\n" .. GRAV_PAIR, potential = GRAV_POT }, "%:define real int")
  same_as_gravity(orrery.force{ name = "digraph2", scale = "G", finite_at_zero = true,
    pair = "if (d2 >= 0) <% " .. GRAV_PAIR .. " %>", potential = GRAV_POT }, "<% %>")
  local line = debug.getinfo(1, "l").currentline + 1
  local ok, err = pcall(orrery.force, { name = "b", pair = "%:include <stdio.h>\nf = mj;" })
  T.eq(ok, false)
  local where = arg[0] .. ":" .. line
  T.eq(err, where .. ": orrery.force: " .. where .. " (force 'b', pair):1: #include is not allowed in a snippet: what a snippet may use is in scope already (real, its variables, the orr_ math), and NVRTC has no system headers")
  line = debug.getinfo(1, "l").currentline + 1
  ok, err = pcall(orrery.force, { name = "b", pair = "%:define orr_rsqrt3_nz(x) 0\nf = mj * orr_rsqrt3_nz(r2);" })
  where = arg[0] .. ":" .. line
  T.eq(err, where .. ": orrery.force: " .. where .. " (force 'b', pair):1: #define orr_rsqrt3_nz: a snippet may not define or undefine names starting with orr_, ORR_, __ or _ and a capital letter")
end)

T.test("a misspelt function is the CPU compiler's error at the snippet's line", function()
  -- GCC only warned about the implicit declaration: the kernel then failed
  -- to load ("undefined symbol: rsqrt3", no law, no line) and was cached
  local law = orrery.force{ name = "typo", scale = "G", pair = "real x = r2;\nf = mj * rsqrt3(x);" }
  local line = debug.getinfo(1, "l").currentline - 1
  for _ = 1, 2 do   -- the second time too: nothing was cached
    local ok, err = pcall(orrery.simulation, { n = 8, force = law, backend = "cpu" })
    T.eq(ok, false)
    local where = arg[0] .. ":" .. line
    T.ok(err:find("orrery.simulation: force law 'typo' (defined at " .. where .. "): host C compiler failed on orrery_gen.c: " ..
      where .. " (force 'typo', pair):2:10: error: implicit declaration of function", 1, true), err)
  end
end)

T.test("the scale expression: what it may use, and compiler errors at its own line", function()
  local function raises_at(want, spec)
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(orrery.force, spec)
    T.eq(ok, false)
    local where = arg[0] .. ":" .. line
    T.eq(err, where .. ": orrery.force: " .. where .. " (force 'sc', scale):" .. want)
  end
  local also = "which may use numbers, the law's params (k), G, eps, eps2, real and the orr_ math functions"
  raises_at("1: 'mi' is not in scope in the scale expression, " .. also ..
    ": it is evaluated once per body, and this is a pair's (use it in the pair snippet)",
    { name = "sc", pair = "f = mj;", scale = "G * mi", params = { k = 1 } })
  raises_at("1: 'q_i' is not in scope in the scale expression, " .. also ..
    ": it is evaluated once per body, and this is a pair's (use it in the pair snippet)",
    { name = "sc", pair = "f = mj;", scale = "q_i", params = { k = 1 }, attributes = { "q" } })
  raises_at("1: 'nan' is not in scope in the scale expression, " .. also,
    { name = "sc", pair = "f = mj;", scale = "nan", params = { k = 1 } })
  raises_at("1: the scale expression ends with '?': an operand is missing",
    { name = "sc", pair = "f = mj;", scale = "G ?" })
  raises_at("1: '[' in the scale expression: no array is in scope there",
    { name = "sc", pair = "f = mj;", scale = "G[0]" })
  -- what only the compiler sees: at the scale's line, not "<law sc: generated>:10"
  local law = orrery.force{ name = "half", scale = "1/0", pair = GRAV_PAIR }
  local line = debug.getinfo(1, "l").currentline - 1
  local ok, err = pcall(orrery.simulation, { n = 8, force = law, backend = "cpu" })
  T.eq(ok, false)
  T.ok(err:find(arg[0] .. ":" .. line .. " (force 'half', scale):1:2: error: division by zero", 1, true), err)
  T.ok(not err:find("generated>", 1, true), err)
end)

T.test("a macro may not hide a bracket, nor be named defined", function()
  local function raises_at(want, spec)
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(orrery.force, spec)
    T.eq(ok, false)
    local where = arg[0] .. ":" .. line
    T.eq(err, where .. ": orrery.force: " .. where .. " (force 'mc', pair):" .. want)
  end
  raises_at("1: #define END: a macro's body must balance its brackets, and this one has '}' without a matching '{'",
    { name = "mc", pair = "#define END }\nf = mj * orr_rsqrt3_nz(r2); END" })
  raises_at("1: #define OPEN: a macro's body must balance its brackets, and this one has '{' never closed",
    { name = "mc", pair = "#define OPEN {\nOPEN f = mj; }" })
  raises_at("1: #define P: a macro's body must balance its brackets, and this one has '(' never closed",
    { name = "mc", pair = "#define P (\nf = P mj);" })
  raises_at("1: #define defined: 'defined' is the preprocessor's operator, not a macro name",
    { name = "mc", pair = "#define defined 1\nf = mj * orr_rsqrt3_nz(r2);" })
  -- balanced bodies are fine
  same_as_gravity(orrery.force{ name = "sq", scale = "G", finite_at_zero = true,
    pair = "#define SQ(x) ((x) * (x))\n#define BLOCK(s) { s }\nBLOCK(f = SQ(mj) / mj * orr_rsqrt3_nz(r2););",
    potential = GRAV_POT }, "balanced macros")
end)

T.test("non-ASCII characters and NUL bytes in snippets are refused at their line", function()
  local function raises_at(want, spec)
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(orrery.force, spec)
    T.eq(ok, false)
    local where = arg[0] .. ":" .. line
    T.eq(err, where .. ": orrery.force: " .. where .. " (force 'na', " .. want)
  end
  -- GCC took it, NVRTC did not: refused alike for both backends
  raises_at("pair):1: a non-ASCII character '\u{e9}' outside comments and strings: NVRTC refuses it (names and operators are ASCII)",
    { name = "na", pair = "real \u{e9} = 1;\nf = mj * \u{e9};" })
  -- what followed a NUL was dropped silently
  raises_at("pair):2: a NUL byte: a snippet is text, and what follows the NUL would be dropped",
    { name = "na", pair = "f = mj;\nf = 0;\0 f = 1 / 0;" })
  raises_at("scale):1: a NUL byte: a snippet is text, and what follows the NUL would be dropped",
    { name = "na", pair = "f = mj;", scale = "G\0 * 2" })
  T.raises("orrery.force: 'doc' has a NUL byte (what follows it would be dropped)",
    orrery.force, { name = "na", pair = "f = mj;", doc = "a\0b" })
  raises_at("jerk):3: a NUL byte: a snippet is text, and what follows the NUL would be dropped",
    { name = "na", pair = "f = mj;", jerk = "g = 0;\n\ng = 1;\0" })
  T.raises("orrery.force: 'name' has a NUL byte (what follows it would be dropped)",
    orrery.force, { name = "na\0me", pair = "f = mj;" })
  T.raises("orrery.force: 'attributes'[2] has a NUL byte (what follows it would be dropped)",
    orrery.force, { name = "na", pair = "f = mj;", attributes = { "q", "s\0x" } })
  T.raises("orrery.force: a 'params' name has a NUL byte (what follows it would be dropped)",
    orrery.force, { name = "na", pair = "f = mj;", params = { ["k\0x"] = 1 } })
  -- in comments and strings it is fine
  same_as_gravity(orrery.force{ name = "utf8", scale = "G", finite_at_zero = true,
    pair = "/* \u{e9}t\u{e9} */ " .. GRAV_PAIR, potential = GRAV_POT }, "UTF-8 in a comment")
end)

T.done()
