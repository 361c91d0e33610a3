-- test_fuzz: calls every function and method of the module with wrong
-- types, nil, NaN, infinities, negative and huge values (inside pcall),
-- orrery.read and orrery.restore on good and broken files too, and
-- orrery.force with every key.
-- Every call must either succeed or raise a string error; values that can
-- never be valid (NaN, infinities, wrong types) must raise.  The process
-- must end normally: a crash fails the run in tests/test_lua.sh.
-- (Huge but valid step counts are left out: they would only take long.)
local T = dofile(arg[0]:match("^(.*/)") .. "testlib.lua")
local orrery = require "orrery"

local closed = orrery.simulation{ n = 4, backend = "cpu" }
local closed_pos = closed.pos
closed:close()
local bodies = orrery.ic.plummer{ n = 4 }

-- the values, nil included (hence the explicit count)
local values = table.pack(nil, true, false, 0, -1, 1.5, 0 / 0, math.huge, -math.huge, 1e300,
  -1e300, math.maxinteger, math.mininteger, 2 ^ 31, 2 ^ 63, "", "x", "1", "float", {}, { 1, 2, 3 },
  { x = 0 / 0 }, { n = 4 }, tostring, coroutine.create(print), closed, closed_pos, bodies, io.stdout)

local function each(fn)
  for i = 1, values.n do fn(values[i], i) end
end

-- a value no number field accepts
local function never_a_number(v)
  return type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge
end

local calls, errors = 0, 0

-- pcall that checks the shape of the error; returns ok
local function try(what, fn, ...)
  calls = calls + 1
  local ok, err = pcall(fn, ...)
  if not ok then
    errors = errors + 1
    if type(err) ~= "string" or err == "" then
      error(what .. ": error object is " .. tostring(err), 2)
    end
    if err:find("error in error handling", 1, true) then error(what .. ": " .. err, 2) end
  end
  return ok
end

local function must_fail(what, fn, ...)
  if try(what, fn, ...) then error(what .. ": expected an error", 2) end
end

local function name(v)
  if type(v) == "number" then return tostring(v) end
  if type(v) == "string" then return string.format("%q", v) end
  return type(v)
end

T.test("orrery.simulation", function()
  each(function(v)
    if type(v) ~= "table" then must_fail("simulation(" .. name(v) .. ")", orrery.simulation, v) end
  end)
  local numeric = { n = true, G = true, softening = true, dt = true, damping = true, dims = true,
    device = true }
  for _, key in ipairs{ "n", "bodies", "precision", "G", "softening", "dt", "integrator",
    "damping", "force", "backend", "box", "dims", "device" } do
    each(function(v)
      local opts = { n = 4, backend = "cpu", [key] = v }
      if key == "n" then opts.n = v end
      if key == "bodies" then opts.n = nil end
      local what = string.format("simulation{%s=%s}", key, name(v))
      local ok = try(what, orrery.simulation, opts)
      if numeric[key] and v ~= nil and never_a_number(v) and ok then
        error(what .. ": expected an error")
      end
      if (key == "precision" or key == "integrator" or key == "backend" or key == "force")
        and v ~= nil and type(v) ~= "string" and ok then
        error(what .. ": expected an error")
      end
    end)
  end
  collectgarbage()
end)

T.test("orrery.ic generators", function()
  for _, gname in ipairs(orrery.ic.list()) do
    local gen = orrery.ic[gname]
    each(function(v)
      if v ~= nil and type(v) ~= "table" then must_fail(gname .. "(" .. name(v) .. ")", gen, v) end
    end)
    -- the keys it takes: probe with an unknown key, the message lists them
    local _, err = pcall(gen, { nokey = 1 })
    local keys = {}
    for k in err:match("%(valid: ([^)]*)%)"):gmatch("[%w_]+") do keys[#keys + 1] = k end
    T.ok(#keys >= 1, gname .. " lists its keys")
    for _, key in ipairs(keys) do
      each(function(v)
        local opts = { n = 8, seed = 1 }
        if not err:find("valid: n,", 1, true) then opts.n = nil end
        opts[key] = v
        -- huge-but-valid counts would only allocate for long: skip counts above 2^20
        if key == "n" and type(v) == "number" and v > 2 ^ 20 and v <= 2 ^ 31 - 1 then return end
        local what = string.format("ic.%s{%s=%s}", gname, key, name(v))
        local ok = try(what, gen, opts)
        if v ~= nil and never_a_number(v) and ok then error(what .. ": expected an error") end
      end)
    end
  end
  collectgarbage()
end)

T.test("Sim methods", function()
  local methods = {}
  for k in pairs(orrery.Sim) do methods[#methods + 1] = k end
  table.sort(methods)
  T.ok(#methods >= 14, "method count")
  for _, m in ipairs(methods) do
    local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 8 }, backend = "cpu" }
    each(function(v)
      -- as a function with a wrong self: always an error
      if v ~= sim and not (m == "close" and v == closed) then   -- closing twice is fine
        must_fail(m .. "(" .. name(v) .. ")", orrery.Sim[m], v)
      end
      if m == "close" then return end
      -- valid but long: many steps
      if (m == "step" or m == "_steps") and type(v) == "number" and v > 100 then return end
      if (m == "advance" or m == "_advance") and type(v) == "number" and v > 1 then return end
      local what = string.format("sim:%s(%s)", m, name(v))
      try(what, sim[m], sim, v)
      try(what .. ", x", sim[m], sim, v, v)
      if m == "set_body" or m == "body" then
        try(what, sim[m], sim, 1, v)
        try(what, sim[m], sim, v, {})
        if v ~= nil and never_a_number(v) then
          for _, f in ipairs{ "x", "y", "z", "vx", "vy", "vz", "m" } do
            must_fail("set_body(1, {" .. f .. "=" .. name(v) .. "})", sim.set_body, sim, 1, { [f] = v })
          end
        end
      end
      if m == "set_bodies" or m == "load" then
        try(what, sim[m], sim, { v })
        try(what, sim[m], sim, { { x = v } })
      end
      if m == "run" then
        for _, key in ipairs{ "steps", "every", "on_step", "progress" } do
          if not (type(v) == "number" and v > 100) then
            try(what, sim.run, sim, { steps = key == "steps" and v or 2, [key] = v })
          end
        end
      end
    end)
    -- still usable afterwards (unless closed)
    if m ~= "close" then
      sim:load(orrery.ic.plummer{ n = 8 })
      sim:step(2)
      T.ok(sim:energy().total < 0, "energy after fuzzing " .. m)
    end
  end
  collectgarbage()
end)

T.test("Sim fields", function()
  local sim <close> = orrery.simulation{ n = 4, backend = "cpu" }
  each(function(v)
    try("sim[" .. name(v) .. "]", function() return sim[v] end)
    if v ~= nil and v == v then try("sim[v] = 1", function() sim[v] = 1 end) end
    local ok = try("sim.dt = " .. name(v), function() sim.dt = v end)
    if ok and (never_a_number(v) or v <= 0) then error("sim.dt = " .. name(v) .. " accepted") end
    try("tostring", tostring, v)
  end)
  T.ok(sim.dt > 0)
end)

T.test("buffers", function()
  local sim <close> = orrery.simulation{ n = 4, backend = "cpu" }
  for _, field in ipairs{ "pos", "vel", "mass" } do
    local buf = sim[field]
    each(function(v)
      local what = field .. "[" .. name(v) .. "]"
      try(what, function() return buf[v] end)
      if v ~= nil and v == v then
        try(what .. " = 1", function() buf[v] = 1 end)
        try(what .. " = v", function() buf[1] = v end)
      end
      -- (argument lists convert numeric strings, as Lua's own functions do)
      if never_a_number(tonumber(v)) then
        must_fail(field .. ":set(1, " .. name(v) .. ")", buf.set, buf, 1, v, v, v)
      end
      try(field .. ":get", buf.get, buf, v)
      try(field .. ":set", buf.set, buf, v, 1, 2, 3)
      try(field .. ":from_table", buf.from_table, buf, v)
      try(field .. ":from_table{v}", buf.from_table, buf, { v, v, v, v, v, v, v, v, v, v, v, v })
      for _, m in ipairs{ "get", "set", "to_table", "from_table" } do
        if v ~= buf then must_fail(field .. "." .. m .. "(" .. name(v) .. ")", buf[m], v) end
      end
    end)
    T.eq(#buf, 4)
  end
  for _, m in ipairs{ "get", "set", "to_table", "from_table" } do
    must_fail("closed buffer " .. m, closed_pos[m], closed_pos, 1, 1, 1, 1)
  end
end)

T.test("Bodies and module functions", function()
  each(function(v)
    try("bodies:body", bodies.body, bodies, v)
    try("bodies[v]", function() return bodies[v] end)
    if v ~= bodies then must_fail("Bodies.body(v)", bodies.body, v) end
    try("_isatty", orrery._isatty, v)
    try("_clock", orrery._clock, v)
    try("ic.list", orrery.ic.list, v)
  end)
  T.eq(#bodies, 4)
end)

-- files for orrery.read and orrery.restore: good ones, and bad ones made
-- from them (empty, truncated, garbage, wrong kind, non-finite values)
local dir = (os.getenv("TEST_TMP") or "/tmp") .. "/fuzz-" .. math.random(1 << 30) .. "-"
local made = {}   -- removed at the end
local function write_file(name, data)
  made[#made + 1] = dir .. name
  local f = assert(io.open(dir .. name, "wb"))
  f:write(data)
  f:close()
  return dir .. name
end
local function read_file(p)
  local f = assert(io.open(p, "rb"))
  local d = f:read("a")
  f:close()
  return d
end

local function bad_files()
  local src <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 8 }, backend = "cpu" }
  src:step(2)
  local txt, csv = src:write(dir .. "good.txt"), src:write(dir .. "good.csv")
  local h5, ck = src:write(dir .. "good.hdf5"), dir .. "good.ckpt.hdf5"
  src:checkpoint(ck)
  for _, f in ipairs{ txt, csv, h5, ck } do made[#made + 1] = f end
  local t, h, c = read_file(txt), read_file(h5), read_file(ck)
  local files = {
    write_file("empty.txt", ""), write_file("empty.csv", ""), write_file("empty.hdf5", ""),
    write_file("header.txt", t:match("^[^\n]*\n")),
    write_file("cut.txt", t:sub(1, #t // 2)),
    write_file("nan.txt", (t:gsub("\n(%S+ )%S+", "\n%1nan", 1))),
    write_file("inf.txt", (t:gsub("\n(%S+ )%S+", "\n%11e999", 1))),
    write_file("negmass.txt", (t:gsub("(%S+)\n", "-%1\n", 2))),
    write_file("words.csv", "a,b,c\n1,2,3\n"),
    write_file("huge.txt", t:match("^[^\n]*\n") .. string.rep("1 ", 7) .. "1e308\n"),
    write_file("cut.hdf5", h:sub(1, #h // 2)), write_file("cut.ckpt.hdf5", c:sub(1, #c // 2)),
    write_file("garbage.hdf5", string.rep("\0\1\255garbage", 200)),
    write_file("noext", t), dir, dir .. "missing.hdf5", dir .. string.rep("a", 5000) .. ".txt",
    dir .. "nul\0byte.txt",
  }
  return txt, csv, h5, ck, files
end

T.test("orrery.read", function()
  each(function(v) must_fail("read(" .. name(v) .. ")", orrery.read, v) end)
  local txt, csv, h5, ck, files = bad_files()
  for _, good in ipairs{ txt, csv, h5, ck } do
    local b = orrery.read(good)
    T.eq(#b, 8, good)
    each(function(v) try("read(good, " .. name(v) .. ")", orrery.read, good, v) end)
  end
  for _, f in ipairs(files) do
    if f ~= dir .. "huge.txt" then must_fail("read(" .. f:sub(#dir + 1, #dir + 40) .. ")", orrery.read, f) end
  end
  -- a finite but huge value reads; the simulation takes it (it is finite)
  try("read(huge.txt)", orrery.read, dir .. "huge.txt")
  collectgarbage()
end)

T.test("orrery.restore", function()
  each(function(v) must_fail("restore(" .. name(v) .. ")", orrery.restore, v) end)
  local txt, csv, h5, ck, files = bad_files()
  for _, f in ipairs{ txt, csv, h5 } do must_fail("restore(snapshot)", orrery.restore, f) end
  for _, f in ipairs(files) do
    must_fail("restore(" .. f:sub(#dir + 1, #dir + 40) .. ")", orrery.restore, f)
  end
  each(function(v)
    local what = "restore(ck, " .. name(v) .. ")"
    local ok = try(what, function()
      local sim <close> = orrery.restore(ck, v)
      sim:step(1)
    end)
    if ok and v ~= nil and type(v) ~= "table" then error(what .. ": expected an error") end
    what = "restore(ck, {backend=" .. name(v) .. "})"
    ok = try(what, function()
      local sim <close> = orrery.restore(ck, { backend = v })
      sim:step(1)
    end)
    if ok and v ~= nil and v ~= "auto" and v ~= "cpu" and v ~= "cuda" then
      error(what .. ": expected an error")
    end
    if v ~= nil and v == v and v ~= "backend" then   -- any other key: an error
      must_fail("restore(ck, {[" .. name(v) .. "]=1})", orrery.restore, ck, { [v] = 1 })
    end
  end)
  local sim <close> = orrery.restore(ck, { backend = "cpu" })
  T.eq(sim.n, 8)
  collectgarbage()
end)

T.test("orrery.force", function()
  each(function(v)
    if type(v) ~= "table" then
      local what = "force(" .. name(v) .. ")"
      local ok = try(what, orrery.force, v)
      if ok and not (type(v) == "string" and orrery.force(v)) then error(what .. ": expected an error") end
    end
  end)
  for _, b in ipairs(orrery.forces) do T.eq(orrery.force(b).name, b) end
  local keys = { "name", "base", "doc", "params", "runtime_params", "attributes", "pair",
    "potential", "scale", "finite_at_zero" }
  local laws = {}
  for _, key in ipairs(keys) do
    each(function(v)
      -- a law of its own and one derived from a built-in, with key set to v
      local own = { name = "fz", params = { k = 1 }, pair = "f = k * mj;", [key] = v }
      local derived = { base = "lennard_jones", [key] = v }
      for _, opts in ipairs{ own, derived } do
        local what = string.format("force{%s%s=%s}", opts.base and "base, " or "", key, name(v))
        local ok, law = pcall(orrery.force, opts)
        calls = calls + 1
        if not ok then
          errors = errors + 1
          T.eq(type(law), "string", what)
        else
          laws[#laws + 1] = law
        end
      end
      -- params and names: tables holding v
      for _, k in ipairs{ "params", "runtime_params", "attributes" } do
        try(("force{%s={v}}"):format(k), orrery.force,
          { name = "fz", params = { k = 1 }, pair = "f = k * mj;", [k] = { v } })
        try(("force{%s={k=v}}"):format(k), orrery.force,
          { name = "fz", params = { k = 1 }, pair = "f = k * mj;", [k] = { k = v } })
      end
      if v ~= nil and never_a_number(v) then
        must_fail("force{params={k=" .. name(v) .. "}}", orrery.force,
          { name = "fz", params = { k = v }, pair = "f = k * mj;" })
        must_fail("force{base, params={epsilon=" .. name(v) .. "}}", orrery.force,
          { base = "lennard_jones", params = { epsilon = v } })
      end
    end)
  end
  T.ok(#laws > 0, "some laws were accepted")
  -- Force fields with any key
  local law = orrery.force{ name = "fz", params = { k = 1 }, runtime_params = { "k" },
    attributes = { "q" }, pair = "f = k * q_j * mj;", potential = "u = 0;" }
  each(function(v)
    try("law[" .. name(v) .. "]", function() return law[v] end)
    if v ~= nil and v == v then try("law[v] = 1", function() law[v] = 1 end) end
  end)
  -- a law on a simulation: its params and attributes with any value
  local sim <close> = orrery.simulation{ n = 4, backend = "cpu", force = law, precision = "double" }
  each(function(v)
    try("set_param(k, v)", sim.set_param, sim, "k", v)
    try("set_param(v, 1)", sim.set_param, sim, v, 1)
    try("param(v)", sim.param, sim, v)
    try("set_attribute(q, 1, v)", sim.set_attribute, sim, "q", 1, v)
    try("set_attribute(q, v, 1)", sim.set_attribute, sim, "q", v, 1)
    try("set_attribute(v, 1, 1)", sim.set_attribute, sim, v, 1, 1)
    try("set_attribute(q, {v})", sim.set_attribute, sim, "q", { v, v, v, v })
    try("attribute(v)", sim.attribute, sim, v)
    try("attribute(q, v)", sim.attribute, sim, "q", v)
    -- (argument lists convert numeric strings, as Lua's own functions do)
    if v ~= nil and never_a_number(tonumber(v)) then
      must_fail("set_param(k, " .. name(v) .. ")", sim.set_param, sim, "k", v)
      must_fail("set_attribute(q, 1, " .. name(v) .. ")", sim.set_attribute, sim, "q", 1, v)
    end
  end)
  T.ok(sim.params and sim:param("k") == sim:param("k"), "the param is a number")
  sim:step(1)
  -- a law whose snippet does not compile fails the simulation, not the process
  local broken = orrery.force{ name = "broken", pair = "this is not C;" }
  must_fail("simulation{force=broken}", orrery.simulation,
    { n = 4, backend = "cpu", force = broken, tune = false })
  collectgarbage()
end)

T.test("closed simulation", function()
  for m, f in pairs(orrery.Sim) do
    if m ~= "close" then must_fail("closed:" .. m, f, closed, 1, {}) end
  end
  closed:close()
  T.eq(tostring(closed), "orrery.Sim (closed)")
end)

for _, f in ipairs(made) do os.remove(f) end

T.test("summary", function()
  print(string.format("    %d calls, %d errors", calls, errors))
  T.ok(errors > 0 and calls > errors)
end)

T.done()
