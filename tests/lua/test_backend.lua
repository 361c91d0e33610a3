-- test_backend: what creating a simulation does beyond itself.  A float
-- simulation on the CPU loads kernels compiled with -ffast-math, whose
-- objects carry GCC's crtfastmath constructor (flush-to-zero and
-- denormals-are-zero in MXCSR): the process's arithmetic must not change,
-- in the script's thread or in the OpenMP workers the kernels run on.  And
-- backend = "cuda" without a GPU says so plainly.
local T = dofile(arg[0]:match("^(.*/)") .. "testlib.lua")
local orrery = require "orrery"

-- computed at run time, not folded into constants
local function tiny() return tonumber("1e-310") end

T.test("denormals before any simulation", function()
  local x = tiny()
  T.ok(x > 0, "1e-310 > 0"); T.ok(x * 1 ~= 0, "1e-310 * 1 ~= 0")
end)

T.test("a float CPU simulation leaves denormals alone", function()
  local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 256 }, backend = "cpu",
    precision = "float" }
  local x = tiny()
  T.ok(x > 0, "after creation: 1e-310 > 0"); T.ok(x * 1 ~= 0, "after creation: 1e-310 * 1 ~= 0")
  sim:step(3)
  sim:energy()
  x = tiny()
  T.ok(x > 0, "after stepping: 1e-310 > 0"); T.ok(x * 1 ~= 0, "after stepping: 1e-310 * 1 ~= 0")
  T.ok(x / 2 > 0 and x * 0.5 ~= 0, "1e-310 / 2 is not flushed")
end)

-- The worker threads: with G = 1e-310 every pull between bodies 1 apart is
-- a denormal, computed by whichever thread owns the body; flush-to-zero in
-- any of them would leave some bodies at rest.
T.test("OpenMP workers keep denormals (double kernel, G = 1e-310)", function()
  local n = 64
  local sim <close> = orrery.simulation{ n = n, backend = "cpu", precision = "double",
    G = tiny(), softening = 0, dt = 1, integrator = "euler" }
  for i = 1, n do
    sim:set_body(i, { x = (i - 1) * 1.0, m = 1 })
  end
  sim:step(1)
  for i = 1, n do
    local vx = sim:body(i).vx
    T.ok(vx ~= 0, "body " .. i .. " vx = " .. vx)
  end
  -- the end bodies are pulled inwards by at least their neighbour's 1e-310
  T.ok(sim:body(1).vx >= tiny(), "body 1 vx = " .. sim:body(1).vx)
  T.ok(sim:body(n).vx <= -tiny(), "body n vx = " .. sim:body(n).vx)
end)

local cuda_ok, cuda_err = pcall(orrery.simulation, { n = 4, backend = "cuda" })
if cuda_ok then
  cuda_err:close()
  T.skip("backend = \"cuda\" without a GPU", "a GPU is usable here")
else T.test("backend = \"cuda\" without a GPU", function()
  local msg = cuda_err:gsub("^[^:\n]+%.lua:%d+: ", "")
  T.ok(msg:find("^orrery%.simulation: backend 'cuda': no usable GPU %(.+%)$"), msg)
  T.ok(not msg:find("tuning"), msg)
  -- without a driver (CI), the exact message
  if msg:find("cannot load the CUDA driver", 1, true) then
    T.eq(msg, "orrery.simulation: backend 'cuda': no usable GPU (cannot load the CUDA driver "
      .. "(libcuda.so.1: cannot open shared object file: No such file or directory): no NVIDIA "
      .. "driver installed)")
  end
  -- the same with tuning off and on
  for _, tune in ipairs{ false, true } do
    local ok2, err2 = pcall(orrery.simulation, { n = 4, backend = "cuda", tune = tune })
    T.eq(ok2, false)
    T.eq(err2:gsub("^[^:\n]+%.lua:%d+: ", ""), msg, "tune = " .. tostring(tune))
  end
end) end

T.done()
