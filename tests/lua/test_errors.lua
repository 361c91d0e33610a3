-- test_errors: the exact messages a script sees for bad calls, inside pcall
-- (tests/test_lua.sh checks the same from the outside: exit status, file:line
-- and traceback).  Messages name the key or argument, the expected value
-- and what was given; positions are the caller's line.
local T = dofile(arg[0]:match("^(.*/)") .. "testlib.lua")
local orrery = require "orrery"

local function sim_with(opts)
  return function()
    opts.backend = opts.backend or "cpu"
    return orrery.simulation(opts)
  end
end

T.test("errors carry the caller's file:line", function()
  local sim <close> = orrery.simulation{ n = 4, backend = "cpu" }
  local line = debug.getinfo(1, "l").currentline; local ok, err = pcall(function() sim:step("x") end)
  T.eq(ok, false)
  T.eq(err, arg[0] .. ":" .. line .. ": bad argument #1 to 'step' (number expected, got string)")
  line = debug.getinfo(1, "l").currentline; ok, err = pcall(function() orrery.simulation{ n = 4, stpes = 1 } end)
  T.eq(err, arg[0] .. ":" .. line .. ": orrery.simulation: unknown key 'stpes'")
  -- errors raised inside the embedded library point at the script too
  line = debug.getinfo(1, "l").currentline; ok, err = pcall(function() sim:run{ steps = "x" } end)
  T.eq(err, arg[0] .. ":" .. line .. ": sim:run: 'steps' must be a non-negative integer (got \"x\")")
  sim:close()
  line = debug.getinfo(1, "l").currentline; ok, err = pcall(function() sim:run{ steps = 1 } end)
  T.eq(err, arg[0] .. ":" .. line .. ": orrery.Sim: simulation is closed")
end)

T.test("orrery.simulation: keys and values", function()
  local W = "orrery.simulation: "
  T.raises(W .. "unknown key 'stpes'", sim_with{ n = 4, stpes = 10 })
  T.raises(W .. "unknown key [1]", sim_with{ 512 })
  T.raises(W .. "'n' or 'bodies' is required", sim_with{})
  T.raises(W .. "'kernel' must be a table {block =, unroll =, split =, ipt =, ranges =, threads =, prefetch =} (got 256)",
    sim_with{ n = 4, kernel = 256 })
  T.raises(W .. "kernel: unknown key 'blok' (valid: block, unroll, split, ipt, ranges, threads, prefetch)",
    sim_with{ n = 4, kernel = { blok = 256 } })
  T.raises(W .. "'kernel.prefetch' must be an integer from 0 to 1 (got 2)",
    sim_with{ n = 4, kernel = { prefetch = 2 } })
  T.raises(W .. "'kernel.unroll' must be an integer from 1 to 1048576 (got 0)",
    sim_with{ n = 4, kernel = { unroll = 0 } })
  T.raises(W .. "'kernel.threads' must be an integer from 0 to 1048576 (got 1.5)",
    sim_with{ n = 4, kernel = { threads = 1.5 } })
  T.raises(W .. "a kernel configuration of one's own and tune = on exclude each other (the tuner would replace it)",
    sim_with{ n = 4, kernel = { block = 512 }, tune = true })
  T.raises(W .. "'n' must be an integer from 1 to 2147483647 (got 0)", sim_with{ n = 0 })
  T.raises(W .. "'n' must be an integer from 1 to 2147483647 (got 1.5)", sim_with{ n = 1.5 })
  T.raises(W .. "'n' must be an integer from 1 to 2147483647 (got \"8\")", sim_with{ n = "8" })
  T.raises(W .. "'n' must be an integer from 1 to 2147483647 (got 1e+100)", sim_with{ n = 1e100 })
  T.raises(W .. "'precision' must be \"float\", \"double\" or \"mixed\" (got \"half\")",
    sim_with{ n = 4, precision = "half" })
  T.raises(W .. "'dt' must be a positive number (got -1)", sim_with{ n = 4, dt = -1 })
  T.raises(W .. "'dt' must be a positive number (got 0)", sim_with{ n = 4, dt = 0 })
  T.raises(W .. "'dt' must be a positive number (got nan)", sim_with{ n = 4, dt = 0 / 0 })
  T.raises(W .. "'dt' must be a positive number (got inf)", sim_with{ n = 4, dt = math.huge })
  T.raises(W .. "'G' must be a finite number (got \"big\")", sim_with{ n = 4, G = "big" })
  T.raises(W .. "'softening' must be a non-negative number (got -0.1)",
    sim_with{ n = 4, softening = -0.1 })
  T.raises(W .. "'integrator' must be \"euler\", \"leapfrog\", \"yoshida4\" or \"hermite\" (got \"rk4\")",
    sim_with{ n = 4, integrator = "rk4" })
  T.raises(W .. "'damping' must be a number in (0, 1] (got 1.5)", sim_with{ n = 4, damping = 1.5 })
  T.raises(W .. "damping applies to the euler integrator only", sim_with{ n = 4, damping = 0.9 })
  T.raises(W .. "'backend' must be \"auto\", \"cuda\" or \"cpu\" (got \"tpu\")",
    sim_with{ n = 4, backend = "tpu" })
  T.raises(W .. "'dims' must be 2 or 3 (got 4)", sim_with{ n = 4, dims = 4 })
  T.raises("^orrery%.simulation: 'box' must be {Lx, Ly} or {Lx, Ly, Lz} of non%-negative numbers",
    sim_with{ n = 4, box = { 1 } })
  T.raises("^orrery%.simulation: 'box' must be", sim_with{ n = 4, box = { 1, -1 } })
  T.raises(W .. "'force' must be the name of a force law or an orrery.Force (got 3)", sim_with{ n = 4, force = 3 })
  T.raises(W .. "unknown force law 'nosuchlaw' (built in: coulomb, gravity, gravity_spline, lennard_jones, yukawa)", sim_with{ n = 4, force = "nosuchlaw" })
  T.raises(W .. "'bodies' must be an orrery.Bodies or a list of body tables (got 3)",
    sim_with{ bodies = 3 })
  T.raises(W .. "'bodies' is empty", sim_with{ bodies = {} })
  T.raises(W .. "'bodies': body 2: 'x' must be a finite number (got nan)",
    sim_with{ bodies = { { x = 0 }, { x = 0 / 0 } } })
  T.raises("bad argument #1 to 'orrery.simulation' (table expected, got no value)", orrery.simulation)
end)

T.test("orrery.simulation: units", function()
  local W = "orrery.simulation: "
  T.raises(W .. "'units' must be a table {length = NAME or length_cm = CM, mass = NAME or mass_g = G} (got \"pc\")",
    sim_with{ n = 4, units = "pc" })
  T.raises(W .. "units: unknown key 'time' (valid: length, length_cm, mass, mass_g)",
    sim_with{ n = 4, units = { length = "pc", mass = "Msun", time = "Myr" } })
  T.raises(W .. "'units.length' must be \"pc\", \"kpc\", \"Mpc\", \"au\", \"Rsun\", \"km\", \"m\" or \"cm\", or give 'length_cm' (got \"parsec\")",
    sim_with{ n = 4, units = { length = "parsec", mass = "Msun" } })
  T.raises(W .. "'units.mass' must be \"Msun\", \"Mearth\", \"Mjup\", \"kg\" or \"g\", or give 'mass_g' (got 2)",
    sim_with{ n = 4, units = { length = "pc", mass = 2 } })
  T.raises(W .. "'units.length_cm' must be a positive number (got -1)",
    sim_with{ n = 4, units = { length_cm = -1, mass = "Msun" } })
  T.raises(W .. "'units.mass_g' must be a positive number (got 0)",
    sim_with{ n = 4, units = { length = "pc", mass_g = 0 } })
  T.raises(W .. "'units.mass_g' must be a positive number (got inf)",
    sim_with{ n = 4, units = { length = "pc", mass_g = math.huge } })
  T.raises(W .. "'units.length_cm' must be a positive number (got \"3e18\")",
    sim_with{ n = 4, units = { length_cm = "3e18", mass = "Msun" } })
  T.raises(W .. "'units' takes 'length' or 'length_cm', not both",
    sim_with{ n = 4, units = { length = "pc", length_cm = 3.0857e18, mass = "Msun" } })
  T.raises(W .. "'units' takes 'mass' or 'mass_g', not both",
    sim_with{ n = 4, units = { length = "pc", mass = "Msun", mass_g = 2e33 } })
  T.raises(W .. "'units' needs 'mass' (a name) or 'mass_g'", sim_with{ n = 4, units = { length = "pc" } })
  T.raises(W .. "'units' needs 'length' (a name) or 'length_cm'", sim_with{ n = 4, units = {} })
  -- the time unit comes from G: a G that cannot give one is refused
  T.raises(W .. "units need a positive G to fix the time unit (got G = 0)",
    sim_with{ n = 4, G = 0, units = { length = "pc", mass = "Msun" } })
  -- at the caller's line, like every option
  local line = debug.getinfo(1, "l").currentline; local ok, err = pcall(function() orrery.simulation{ n = 4, backend = "cpu", units = { length = "pc", mass = "Msol" } } end)
  T.eq(ok, false)
  T.eq(err, arg[0] .. ":" .. line .. ": " .. W .. "'units.mass' must be \"Msun\", \"Mearth\", \"Mjup\", \"kg\" or \"g\", or give 'mass_g' (got \"Msol\")")
end)

T.test("methods: arguments", function()
  local sim <close> = orrery.simulation{ n = 512, backend = "cpu" }
  local function call(name, ...)
    local args = table.pack(...)
    return function() return sim[name](sim, table.unpack(args, 1, args.n)) end
  end
  -- called as functions through sim[name], the message counts self (#2 is the first argument)
  T.raises("bad argument #1 to 'step' (number expected, got string)", function() sim:step("x") end)
  T.raises("bad argument #1 to 'step' (number has no integer representation)",
    function() sim:step(1.5) end)
  T.raises("bad argument #1 to 'step' (step count must be >= 0 (got -1))", function() sim:step(-1) end)
  T.raises("bad argument #1 to 'set_body' (index 0 out of range 1..512)",
    function() sim:set_body(0, {}) end)
  T.raises("bad argument #1 to 'body' (index 513 out of range 1..512)", function() sim:body(513) end)
  T.raises("bad argument #2 to 'set_body' (table expected, got 5)", function() sim:set_body(1, 5) end)
  T.raises("bad argument #2 to 'set_body' (unknown key 'mass' (valid: x, y, z, vx, vy, vz, m))",
    function() sim:set_body(1, { mass = 1 }) end)
  T.raises("bad argument #2 to 'set_body' ('m' must be a non-negative finite number (got -1))",
    function() sim:set_body(1, { m = -1 }) end)
  T.raises("bad argument #1 to 'set_bodies' (table expected, got no value)", function() sim:set_bodies() end)
  T.raises("bad argument #1 to 'set_bodies' (513 bodies given, simulation has 512)", function()
    local t = {}
    for i = 1, 513 do t[i] = {} end
    sim:set_bodies(t)
  end)
  T.raises("bad argument #1 to 'load' (orrery.Bodies or table expected, got no value)",
    function() sim:load() end)
  T.raises("sim:load: 1000 bodies given, simulation has 512",
    function() sim:load(orrery.ic.plummer{ n = 1000 }) end)
  T.raises("bad argument #1 to 'write' (string expected, got no value)", function() sim:write() end)
  T.raises("^cannot write '/dev/null/dir/x%.txt': cannot create directory '/dev/null/dir': Not a "
    .. "directory$", function() sim:write("/dev/null/dir/x.txt") end)
  T.raises("bad argument #1 to 'orrery.Sim.step' (orrery.Sim expected, got no value)", sim.step)
  T.raises("bad argument #1 to 'orrery.Sim.energy' (orrery.Sim expected, got orrery.Buffer)",
    sim.energy, sim.pos)
  T.raises("virial ratio undefined: potential energy is 0", call("virial_ratio"))
end)

T.test("fields", function()
  local sim <close> = orrery.simulation{ n = 4, backend = "cpu" }
  T.raises("orrery.Sim: field 'time' is read-only", function() sim.time = 1 end)
  T.raises("orrery.Sim: field 'pos' is read-only", function() sim.pos = {} end)
  T.raises("orrery.Sim: 'dt' must be a positive number (got 0)", function() sim.dt = 0 end)
  T.raises("orrery.Sim: 'dt' must be a positive number (got \"1\")", function() sim.dt = "1" end)
  T.raises("orrery.Sim: cannot set field \"foo\" (only 'dt' can be set)", function() sim.foo = 1 end)
  -- a number key is described as a number (not turned into the string "1")
  T.raises("orrery.Sim: cannot set field 1 (only 'dt' can be set)", function() sim[1] = 3 end)
  T.raises("orrery.Sim: cannot set field 2.5 (only 'dt' can be set)", function() sim[2.5] = 3 end)
  T.raises("orrery.Sim: cannot set field true (only 'dt' can be set)", function() sim[true] = 3 end)
end)

T.test("buffers", function()
  local sim <close> = orrery.simulation{ n = 4, backend = "cpu" }
  local pos, mass = sim.pos, sim.mass
  T.raises("sim.pos: index 0 out of range 1..4", function() return pos[0] end)
  T.raises("sim.pos: index 5 out of range 1..4", function() pos[5] = { 1, 2, 3 } end)
  T.raises("sim.pos: index 1.5 is not an integer", function() return pos[1.5] end)
  T.raises("sim.pos: index \"x\" is not an integer", function() pos.x = 1 end)
  T.raises("sim.pos[1]: expected a table {x, y, z} of finite numbers (got table)",
    function() pos[1] = { 1, 2 } end)
  T.raises("sim.pos[1]: expected a table {x, y, z} of finite numbers (got table)",
    function() pos[1] = { 1, 2, 0 / 0 } end)
  T.raises("sim.mass[2]: expected a non-negative finite number (got -1)", function() mass[2] = -1 end)
  T.raises("bad argument #1 to 'get' (index 0 out of range 1..4)", function() pos:get(0) end)
  T.raises("bad argument #4 to 'set' (number expected, got no value)", function() pos:set(1, 1, 2) end)
  T.raises("bad argument #2 to 'set' (finite number expected, got inf)",
    function() pos:set(1, math.huge, 0, 0) end)
  T.raises("bad argument #2 to 'set' (non-negative finite number expected, got -2)",
    function() mass:set(1, -2) end)
  T.raises("bad argument #1 to 'from_table' (12 numbers expected (3 per body), got 2)",
    function() pos:from_table{ 1, 2 } end)
  T.raises("bad argument #1 to 'from_table' (element 3: finite number expected, got nan)",
    function() pos:from_table{ 1, 2, 0 / 0, 4, 5, 6, 7, 8, 9, 10, 11, 12 } end)
  T.raises("bad argument #1 to 'from_table' (4 numbers expected (1 per body), got 0)",
    function() mass:from_table{} end)
end)

T.test("orrery.ic", function()
  T.raises("orrery.ic.plummer: unknown key 'scale' (valid: n, seed, mass, radius, G)",
    function() orrery.ic.plummer{ n = 10, scale = 2 } end)
  T.raises("orrery.ic.kepler: unknown key 'n' (valid: seed, m1, m2, a, e, G)",
    function() orrery.ic.kepler{ n = 10 } end)
  T.raises("orrery.ic.plummer: 'n' is required", function() orrery.ic.plummer{} end)
  T.raises("orrery.ic.plummer: 'n' is required", function() orrery.ic.plummer() end)
  T.raises("orrery.ic.plummer: 'n' must be an integer from 1 to 2147483647 (got 10.5)",
    function() orrery.ic.plummer{ n = 10.5 } end)
  T.raises("orrery.ic.plummer: 'seed' must be a non-negative integer (got -1)",
    function() orrery.ic.plummer{ n = 10, seed = -1 } end)
  T.raises("orrery.ic.plummer: 'mass' must be a finite number (got nan)",
    function() orrery.ic.plummer{ n = 10, mass = 0 / 0 } end)
  T.raises("orrery.ic.plummer: mass must be positive (got -2)",
    function() orrery.ic.plummer{ n = 10, mass = -2 } end)
  T.raises("orrery.ic.kepler: e must be in [0, 1) (got 1)", function() orrery.ic.kepler{ e = 1 } end)
  -- ranges that keep the bodies finite, and the bound orbit the docs promise
  T.raises("orrery.ic.plummer: mass must be from 1e-100 to 1e+100 (got 1e+300)",
    function() orrery.ic.plummer{ n = 10, mass = 1e300 } end)
  T.raises("orrery.ic.uniform_sphere: radius must be from 1e-100 to 1e+100 (got 1e-200)",
    function() orrery.ic.uniform_sphere{ n = 10, radius = 1e-200 } end)
  T.raises("orrery.ic.cold_collapse: virial must be from 0 to 1e+100 (got 1e+300)",
    function() orrery.ic.cold_collapse{ n = 10, virial = 1e300 } end)
  T.raises("orrery.ic.galaxy_collision: v_ratio must be in [0, 1) for a bound orbit (got 5)",
    function() orrery.ic.galaxy_collision{ n = 10, v_ratio = 5 } end)
  T.raises("orrery.ic.galaxy_collision: v_ratio must be in [0, 1) for a bound orbit (got 1)",
    function() orrery.ic.galaxy_collision{ n = 10, v_ratio = 1 } end)
  T.raises("orrery.ic.kepler: body 1 would have vy = -inf with m1=1e+100, m2=1e+100, a=1e-100, "
    .. "e=0.999999999999, G=1e+100: use less extreme values",
    function() orrery.ic.kepler{ m1 = 1e100, m2 = 1e100, a = 1e-100, e = 0.999999999999, G = 1e100 } end)
  T.raises("bad argument #1 to 'body' (index 3 out of range 1..2)",
    function() orrery.ic.kepler():body(3) end)
end)

-- Every parameter of every generator at extreme values: an error that
-- names the parameter, or bodies that are all finite, never NaN or inf.
T.test("orrery.ic: extreme values give an error or finite bodies", function()
  local extremes = { 1e300, -1e300, 1e100, 1e-100, 1e-300, 5e-324, 0, -1, 0.999999999999 }
  local tried, refused = 0, 0
  for _, name in ipairs(orrery.ic.list()) do
    -- the parameter names, from the unknown-key message
    local _, msg = pcall(orrery.ic[name], { nonexistent = 1 })
    local valid = msg:match("%(valid: (.*)%)$")
    T.ok(valid, name .. ": " .. tostring(msg))
    for key in valid:gmatch("[%w_]+") do
      if key ~= "n" and key ~= "seed" then
        for _, v in ipairs(extremes) do
          local args = { [key] = v }
          local ok, b = pcall(orrery.ic[name], args)
          if name ~= "kepler" and name ~= "solar_system" then
            args.n = 16
            ok, b = pcall(orrery.ic[name], args)
          end
          tried = tried + 1
          if ok then
            for i = 1, #b do
              for f, x in pairs(b:body(i)) do
                T.ok(x == x and x > -math.huge and x < math.huge,
                  string.format("%s{%s=%g}: body %d %s = %s", name, key, v, i, f, tostring(x)))
              end
            end
          else
            refused = refused + 1
            T.ok(b:find(key, 1, true), string.format("%s{%s=%g}: %s", name, key, v, b))
          end
        end
      end
    end
  end
  T.ok(tried > 100 and refused > 50, tried .. " tried, " .. refused .. " refused")
end)

T.test("sim:load and set_bodies: non-finite values name the body and field", function()
  local sim <close> = orrery.simulation{ n = 2, backend = "cpu" }
  T.raises("bad argument #1 to 'load' (body 2: 'vx' must be a finite number (got inf))",
    function() sim:load{ {}, { vx = math.huge } } end)
  T.raises("bad argument #1 to 'load' (body 1: 'm' must be a non-negative finite number (got nan))",
    function() sim:load{ { m = 0 / 0 }, {} } end)
  T.raises("bad argument #1 to 'set_bodies' (body 2: 'z' must be a finite number (got -inf))",
    function() sim:set_bodies{ {}, { z = -math.huge } } end)
  T.raises("orrery.simulation: 'bodies': body 1: 'y' must be a finite number (got nan)",
    function() orrery.simulation{ bodies = { { y = 0 / 0 } }, backend = "cpu" } end)
end)

T.test("sim:run options", function()
  local sim <close> = orrery.simulation{ n = 4, backend = "cpu" }
  T.raises("bad argument #1 to 'run' (table expected, got no value)", function() sim:run() end)
  T.raises("sim:run: unknown key 'stpes'", function() sim:run{ stpes = 10 } end)
  T.raises("sim:run: 'steps' must be a non-negative integer (got nil)", function() sim:run{} end)
  T.raises("sim:run: 'steps' must be a non-negative integer (got 2.5)", function() sim:run{ steps = 2.5 } end)
  T.raises("sim:run: 'every' must be a positive integer (got 0)",
    function() sim:run{ steps = 2, every = 0 } end)
  T.raises("sim:run: 'on_step' must be a function (got \"f\")",
    function() sim:run{ steps = 2, on_step = "f" } end)
  T.raises("sim:run: 'progress' must be true or false (got 1)",
    function() sim:run{ steps = 2, progress = 1 } end)
  T.raises("bad argument #1 to 'run' (orrery.Sim expected, got 5)", function() sim.run(5, {}) end)
  -- an error in on_step comes out with its own position
  local line = debug.getinfo(1, "l").currentline; local ok, err = pcall(sim.run, sim, { steps = 3, on_step = function() error("mine") end })
  T.eq(err, arg[0] .. ":" .. line .. ": mine")
end)

-- sim:cluster() counts a regularised group once: where the groups leave
-- too few bodies for the density (16 bodies or fewer are one group) the
-- message says so
T.test("sim:cluster: every body in one regularised group", function()
  local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 16, seed = 1 },
    backend = "cpu", precision = "double", softening = 0, integrator = "hermite",
    dt_max = 1 / 16, regularize = true }
  T.eq(sim:cluster().n, 16, "before the first step, no group")
  sim:step()
  T.eq(#sim:binaries()[1].bodies, 16, "one group of all")
  T.raises("sim:cluster: 16 bodies, 1 regularised group counted once at its centre of mass " ..
    "(1 in all): the density needs 2 <= k < n: k = 6, n = 1", sim.cluster, sim)
end)

T.done()
