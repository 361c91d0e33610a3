-- testlib: a tiny assertion helper for the Lua tests (run through
-- `orrery run`).  Prints one cmocka-style line per test and a closing
-- "[ RESULT   ] file: N passed, M failed, K skipped" line, which tests/test_lua.sh
-- counts, and exits 1 when any failed.
--   local T = dofile(arg[0]:match("^(.*/)") .. "testlib.lua")
--   T.test("name", function() T.eq(1 + 1, 2) end)
--   T.done()
local T = { passed = 0, failed = 0, skipped = 0 }
local file = (arg and arg[0] or "?"):match("([^/]+)%.lua$") or "?"

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

-- Runs fn; a Lua error inside it fails the test with the message.
function T.test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    T.passed = T.passed + 1
    print(string.format("[       OK ] %s: %s", file, name))
  else
    T.failed = T.failed + 1
    print(string.format("[  FAILED  ] %s: %s\n    %s", file, name,
      tostring(err):gsub("\n", "\n    ")))
  end
end

-- Records a test that cannot run here (no GPU, say).
function T.skip(name, why)
  T.skipped = T.skipped + 1
  print(string.format("[  SKIPPED ] %s: %s: %s", file, name, why))
end

-- The backends to test on: {"cpu"}, then "cuda" where a GPU is usable.
-- Without one, a skip line for what would have run there, or a failure
-- with ORRERY_REQUIRE_GPU=1 (make gpu-test).  Also returns whether a GPU
-- is usable.
function T.backends(what)
  local orrery = require "orrery"
  local ok, sim = pcall(orrery.simulation, { n = 2, backend = "cuda" })
  if ok then
    sim:close()
    return { "cpu", "cuda" }, true
  end
  local why = tostring(sim):gsub("^[^:]+:%d+: ", "")
  if os.getenv("ORRERY_REQUIRE_GPU") == "1" then
    T.test("a usable GPU (ORRERY_REQUIRE_GPU=1)", function() error(why, 0) end)
  else
    T.skip("cuda: " .. what, why)
  end
  return { "cpu" }, false
end

-- Every body of simulation b bitwise that of a (positions, velocities,
-- masses); tag says which comparison failed.
function T.same_bodies(a, b, tag)
  for i = 1, a.n do
    local p, q = a:body(i), b:body(i)
    for _, k in ipairs{ "x", "y", "z", "vx", "vy", "vz", "m" } do
      if p[k] ~= q[k] then T.eq(q[k], p[k], ("%s: body %d %s"):format(tag, i, k)) end
    end
  end
end

function T.ok(v, what)
  if not v then error((what or "expected a true value") .. ", got " .. show(v), 2) end
  return v
end

function T.eq(got, want, what)
  if got ~= want then
    error(string.format("%sexpected %s, got %s", what and what .. ": " or "", show(want),
      show(got)), 2)
  end
end

-- |got - want| <= tol * max(1, |want|)
function T.near(got, want, tol, what)
  if type(got) ~= "number" or not (math.abs(got - want) <= tol * math.max(1, math.abs(want))) then
    error(string.format("%sexpected %.17g within %g, got %s", what and what .. ": " or "", want,
      tol, show(got)), 2)
  end
end

-- fn(...) must raise an error; with want, the message (position removed)
-- must equal it, or match it when want starts with "^" or ends with "$".
function T.raises(want, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then error("expected an error" .. (want and (" " .. show(want)) or ""), 2) end
  if type(err) ~= "string" then error("error object is a " .. type(err), 2) end
  if want then
    local msg = err:gsub("^[^:\n]+%.lua:%d+: ", "")
    local match
    if want:sub(1, 1) == "^" or want:sub(-1) == "$" then match = msg:find(want) ~= nil
    else match = msg == want end
    if not match then error(string.format("expected error %s, got %s", show(want), show(err)), 2) end
  end
  return err
end

-- The closing line test_lua.sh reads, then exit 0 or 1.
function T.done()
  print(string.format("[ RESULT   ] %s: %d passed, %d failed, %d skipped", file, T.passed,
    T.failed, T.skipped))
  io.stdout:flush()
  os.exit(T.failed == 0 and 0 or 1)
end

return T
