-- test_io: files from scripts: sim:write to HDF5 with numbered paths,
-- orrery.read back into sim:load (exact), extra datasets, checkpoints and
-- orrery.restore continuing runs bit for bit (leapfrog, yoshida4, euler),
-- sim:run's rolling checkpoint and frames, sim:render (frames written in
-- the background: on disk at sim:flush, sim:checkpoint and close; a failed
-- frame raised once, naming the file), physical units (sim.units, the text
-- header, checkpoints), and the messages for bad calls and bad files.  CPU
-- backend, small N.
local T = dofile(arg[0]:match("^(.*/)") .. "testlib.lua")
local orrery = require "orrery"

local tmp = (os.getenv("TEST_TMP") or "/tmp") .. "/io-" .. math.random(1 << 30)
local function path(name) return tmp .. "/" .. name end

local function cpu(opts)
  opts.backend = "cpu"
  return orrery.simulation(opts)
end

local function exists(p)
  local f = io.open(p, "rb")
  if f then f:close() end
  return f ~= nil
end

-- every double of pos and vel equal (==)
local function same_state(a, b, what)
  local pa, pb = a.pos:to_table(), b.pos:to_table()
  local va, vb = a.vel:to_table(), b.vel:to_table()
  local ma, mb = a.mass:to_table(), b.mass:to_table()
  T.eq(#pa, #pb, what)
  for i = 1, #pa do
    if pa[i] ~= pb[i] then error(("%s: pos value %d: %.17g ~= %.17g"):format(what, i, pa[i], pb[i]), 2) end
    if va[i] ~= vb[i] then error(("%s: vel value %d: %.17g ~= %.17g"):format(what, i, va[i], vb[i]), 2) end
  end
  for i = 1, #ma do T.eq(ma[i], mb[i], what .. ": mass") end
end

T.test("write HDF5: numbered paths per simulation", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 50 } }
  T.eq(sim:write(path("a/snap_%03d.hdf5")), path("a/snap_000.hdf5"))
  sim:step(2)
  T.eq(sim:write(path("a/snap_%03d.hdf5")), path("a/snap_001.hdf5"))
  T.eq(sim:write(path("a/fixed.h5")), path("a/fixed.h5"))        -- no number used
  T.eq(sim:write(path("a/snap_%d.h5")), path("a/snap_2.h5"))
  T.eq(sim:write(path("a/text_%02d.csv")), path("a/text_03.csv")) -- text counts too
  local other <close> = cpu{ n = 4 }
  T.eq(other:write(path("a/other_%03d.hdf5")), path("a/other_000.hdf5"))
  T.ok(exists(path("a/snap_000.hdf5")) and exists(path("a/snap_001.hdf5")))
end)

T.test("write: a missing directory is created, text as HDF5", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 20, seed = 2 } }
  for _, ext in ipairs{ "txt", "csv", "hdf5" } do
    local p = path("new_" .. ext .. "/deeper/x." .. ext)
    T.ok(not exists(p))
    T.eq(sim:write(p), p)
    local copy <close> = cpu{ bodies = orrery.read(p) }
    same_state(sim, copy, ext)
    T.eq(io.popen("ls '" .. path("new_" .. ext .. "/deeper") .. "'"):read("a"), "x." .. ext .. "\n")
  end
end)

T.test("write: bad paths", function()
  local sim <close> = cpu{ n = 3 }
  T.raises("output path 'x_%s.h5': '%s' is not allowed (use one integer conversion such as "
    .. "%03d, or %% for a literal %)", sim.write, sim, "x_%s.h5")
  T.raises("output path 'x_%d_%d.h5': more than one number conversion ('%d' and '%d'); use "
    .. "one, or %% for a literal %", sim.write, sim, "x_%d_%d.h5")
  T.raises("cannot write 'out.dat': unknown format (expected .txt, .csv, .hdf5 or .h5)",
    sim.write, sim, "out.dat")
  T.raises("sim:write: extra datasets need an HDF5 file (.hdf5 or .h5), not 'x.txt'",
    sim.write, sim, "x.txt", { q = { 1, 2, 3 } })
  T.raises("sim:write: extra dataset 'q' must be a list of 3 numbers (got table)",
    sim.write, sim, path("x.h5"), { q = { 1, 2 } })
  T.raises("cannot write '" .. path("x.h5") .. "': extra dataset 'Masses' would replace the "
    .. "standard one", sim.write, sim, path("x.h5"), { Masses = { 1, 2, 3 } })
end)

T.test("read: load exactly what was written", function()
  for _, prec in ipairs{ "float", "double" } do
    local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 64, seed = 4 }, precision = prec }
    sim:step(3)
    local p = sim:write(path("r/" .. prec .. ".hdf5"), { charge = (function()
      local q = {}
      for i = 1, 64 do q[i] = i / 8 - 4 end
      return q
    end)() })
    local bodies, extra, time = orrery.read(p)
    T.eq(tostring(bodies), "orrery.Bodies (64 bodies)")
    T.eq(time, sim.time)
    T.eq(#extra.charge, 64)
    T.eq(extra.charge[1], 1 / 8 - 4); T.eq(extra.charge[64], 4)
    local copy <close> = cpu{ n = 64, precision = prec }
    copy:load(bodies)
    same_state(sim, copy, prec)
    local made <close> = cpu{ bodies = orrery.read(p), precision = prec }
    same_state(sim, made, prec .. " (bodies=)")
    -- text output reads back exactly as well
    for _, ext in ipairs{ "txt", "csv" } do
      local tb, tx, tt = orrery.read(sim:write(path("r/" .. prec .. "." .. ext)))
      T.eq(next(tx), nil); T.eq(tt, 0)
      local t2 <close> = cpu{ bodies = tb, precision = prec }
      same_state(sim, t2, prec .. " " .. ext)
    end
  end
end)

T.test("read: bad files", function()
  T.raises("cannot read 'no/such.hdf5': No such file or directory", orrery.read, "no/such.hdf5")
  local f = assert(io.open(path("junk.hdf5"), "w"))
  f:write("not hdf5")
  f:close()
  T.raises("cannot read '" .. path("junk.hdf5") .. "': not an HDF5 file (nor .txt or .csv text "
    .. "output)", orrery.read, path("junk.hdf5"))
  f = assert(io.open(path("bad.csv"), "w"))
  f:write("id,x,y,z,vx,vy,vz,m\n1,0,0,0,0,0,nan,1\n")
  f:close()
  T.raises("cannot read '" .. path("bad.csv") .. "': line 2: vz is not finite (nan)",
    orrery.read, path("bad.csv"))
  T.raises("bad argument #1 to 'orrery.read' (string expected, got no value)", orrery.read)
end)

T.test("checkpoint and restore: bit for bit", function()
  for _, integ in ipairs{ "leapfrog", "yoshida4", "euler" } do
    for _, prec in ipairs{ "float", "double" } do
      local what = integ .. " " .. prec
      local opts = { bodies = orrery.ic.plummer{ n = 128, seed = 9 }, integrator = integ,
        precision = prec, dt = 0.005, softening = 0.03 }
      if integ == "euler" then opts.damping = 0.99 end
      local a <close> = cpu(opts)
      a:step(6)
      T.eq(a:checkpoint(path("c/" .. what .. ".ckpt.hdf5")), path("c/" .. what .. ".ckpt.hdf5"))
      a:step(11)
      local b <close> = orrery.restore(path("c/" .. what .. ".ckpt.hdf5"))
      T.eq(b.steps, 6)
      T.eq(b.integrator, integ); T.eq(b.precision, prec); T.eq(b.dt, 0.005)
      T.eq(b.softening, 0.03); T.eq(b.damping, opts.damping or 1); T.eq(b.backend, "cpu")
      b:step(11)
      T.eq(b.steps, a.steps); T.eq(b.time, a.time, what .. ": time")
      same_state(a, b, what)
    end
  end
end)

T.test("restore: settings, counters, backend option", function()
  local a <close> = cpu{ n = 8, dims = 2, box = { 2, 3 }, G = 0.5, tune = false }
  a:load(orrery.ic.uniform_cube{ n = 8 })
  a:write(path("n/s_%d.h5")); a:write(path("n/s_%d.h5"))
  a:checkpoint(path("n/ck.hdf5"))
  local b <close> = orrery.restore(path("n/ck.hdf5"), { backend = "cpu" })
  T.eq(b.dims, 2); T.eq(b.box[1], 2); T.eq(b.box[2], 3); T.eq(b.G, 0.5)
  T.eq(b:write(path("n/s_%d.h5")), path("n/s_2.h5"))   -- the series goes on
  T.eq(a:write(path("n/s_%d.h5")), path("n/s_2.h5"))
  T.raises("orrery.restore: 'backend' must be \"auto\", \"cuda\" or \"cpu\" (got \"tpu\")",
    orrery.restore, path("n/ck.hdf5"), { backend = "tpu" })
  T.raises("orrery.restore: unknown key 'steps' (valid: backend)", orrery.restore,
    path("n/ck.hdf5"), { steps = 3 })
  T.raises("orrery.restore: cannot read '" .. path("n/s_0.h5") .. "': no Run group (a snapshot, "
    .. "not a checkpoint: orrery.read loads its bodies)", orrery.restore, path("n/s_0.h5"))
  T.raises("orrery.restore: cannot read 'gone.hdf5': No such file or directory",
    orrery.restore, "gone.hdf5")
  T.raises("sim:checkpoint: the path must end in .hdf5 or .h5 (got \"ck.txt\")", a.checkpoint,
    a, "ck.txt")
end)

T.test("units: sim.units, text header, checkpoints", function()
  local pc, msun = 3.0856775814913673e18, 1.988409870698051e33
  local a <close> = cpu{ bodies = orrery.ic.plummer{ n = 16, seed = 4 }, precision = "double",
    units = { length = "pc", mass = "Msun" } }
  local u = a.units
  T.eq(u.length, "pc"); T.eq(u.mass, "Msun"); T.eq(u.length_cm, pc); T.eq(u.mass_g, msun)
  local v = math.sqrt(6.67430e-8 * msun / pc)   -- G = 1
  T.near(u.velocity_cm_s, v, 1e-15); T.near(u.time_s, pc / v, 1e-15)
  T.near(u.time_s / 3.15576e13, 14.909601425915538, 1e-12, "time unit in Myr")
  T.raises("orrery.Sim: field 'units' is read-only", function() a.units = {} end)
  -- N-body units: no units, and the text output as it always was
  local nb <close> = cpu{ n = 4 }
  T.eq(nb.units, nil)
  nb:write(path("u/nbody.txt"))
  local f = assert(io.open(path("u/nbody.txt")))
  T.eq(f:read("l"), "id x y z vx vy vz m"); f:close()
  -- the text output names the units in a comment line, and reads back
  a:step(3)
  a:write(path("u/pc.txt")); a:write(path("u/pc.csv"))
  f = assert(io.open(path("u/pc.csv")))
  T.eq(f:read("l"), "# units: length 1 pc = 3.0856775814913674e+18 cm; mass 1 Msun = "
    .. "1.988409870698051e+33 g; velocity 6558.137898852296 cm/s; time 470511237958472.2 s (G = 1)")
  T.eq(f:read("l"), "id,x,y,z,vx,vy,vz,m"); f:close()
  local back <close> = cpu{ bodies = orrery.read(path("u/pc.txt")), precision = "double" }
  same_state(a, back, "text with units")
  -- sizes in cgs, and G: au, Msun and G = 4 pi^2 make the time unit a year of
  -- 2 pi sqrt(au^3 / (G Msun)) = 365.2568983840 days
  local y <close> = cpu{ n = 2, G = 4 * math.pi ^ 2, units = { length = "au", mass_g = msun } }
  T.eq(y.units.length, "au"); T.eq(y.units.mass, nil); T.eq(y.units.mass_g, msun)
  T.near(y.units.time_s / 86400, 365.2568983840419, 1e-13, "year in days")
  T.eq(cpu{ n = 1, units = { length_cm = 1e20, mass = "kg" } }.units.length_cm, 1e20)
  -- a checkpoint keeps them: the resumed run writes the same units
  a:checkpoint(path("u/ck.hdf5"))
  y:checkpoint(path("u/ck_y.hdf5"))
  local b <close> = orrery.restore(path("u/ck.hdf5"))
  for _, k in ipairs{ "length", "mass", "length_cm", "mass_g", "velocity_cm_s", "time_s" } do
    T.eq(b.units[k], a.units[k], "restored units." .. k)
  end
  local c <close> = orrery.restore(path("u/ck_y.hdf5"))
  T.eq(c.units.length, "au"); T.eq(c.units.mass, nil); T.eq(c.units.time_s, y.units.time_s)
  nb:checkpoint(path("u/ck_nb.hdf5"))
  local d <close> = orrery.restore(path("u/ck_nb.hdf5"))
  T.eq(d.units, nil)
end)

T.test("run: rolling checkpoint and frames", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 64 }, dt = 0.01 }
  local ck = path("run/roll.ckpt.hdf5")
  local res = sim:run{ steps = 10, progress = false, checkpoint_every = 4, checkpoint = ck,
    render_every = 5, render = { path = path("run/f_%03d.png"), width = 32, height = 24 } }
  T.eq(res.steps, 10)
  -- frames at steps 0, 5, 10; the checkpoint last at step 8
  for i = 0, 2 do T.ok(exists(path(("run/f_%03d.png"):format(i))), "frame " .. i) end
  T.ok(not exists(path("run/f_003.png")), "no fourth frame")
  local r <close> = orrery.restore(ck)
  T.eq(r.steps, 8)
  -- the resumed run continues the frame series (the next frame is number 2, at step 10)
  r:run{ steps = 2, progress = false, render_every = 5,
    render = { path = path("run/g_%03d.png"), width = 32, height = 24 } }
  T.ok(exists(path("run/g_002.png")), "resumed frame number")
  same_state(sim, r, "resumed run")
  -- a second run on the same sim starts no frame at step 10 again
  sim:run{ steps = 5, progress = false, render_every = 5, render = path("run/f_%03d.png") }
  T.ok(exists(path("run/f_003.png")) and not exists(path("run/f_004.png")), "frame at step 15")
end)

T.test("run: bad output options", function()
  local sim <close> = cpu{ n = 4 }
  T.raises("sim:run: 'checkpoint_every' must be a positive integer (got 0)", sim.run, sim,
    { steps = 1, checkpoint_every = 0 })
  T.raises("sim:run: 'checkpoint' must be a file name, with 'checkpoint_every' (got \"x.h5\")",
    sim.run, sim, { steps = 1, checkpoint = "x.h5" })
  T.raises("sim:run: 'render_every' and 'render' (sim:render's options or a path) go together "
    .. "(got 3, nil)", sim.run, sim, { steps = 1, render_every = 3 })
  T.raises("sim:run: 'render_every' must be a positive integer (got -1)", sim.run, sim,
    { steps = 1, render_every = -1, render = "x.png" })
end)

T.test("render", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 200 } }
  T.eq(sim:render{ path = path("p/a_%02d.png"), width = 40, height = 30, axis = "xz",
    extent = 2, log = false, colormap = "viridis" }, path("p/a_00.png"))
  T.eq(sim:render(path("p/a_%02d.png")), path("p/a_01.png"))
  T.eq(sim:render{ path = path("p/b.png"), width = 8, height = 8, extent = { -1, 1, -2, 2 } },
    path("p/b.png"))
  sim:flush()   -- written in the background: on disk now
  local f = assert(io.open(path("p/b.png"), "rb"))
  T.eq(f:read(8), "\137PNG\r\n\26\n")
  f:close()
  T.raises("sim:render: unknown key 'size' (valid: path, width, height, axis, extent, log, "
    .. "colormap, movie, fps, crf)", sim.render, sim, { path = "x.png", size = 3 })
  T.raises("sim:render: 'path' must be a file name ending in .png (got nil); or give a movie = "
    .. "\"out.mp4\"", sim.render, sim, {})
  T.raises("sim:render: 'path' must end in .png (got \"x.jpg\")", sim.render, sim, "x.jpg")
  T.raises("sim:render: 'width' must be an integer from 1 to 16384 (got 0)", sim.render, sim,
    { path = "x.png", width = 0 })
  T.raises("sim:render: 'axis' must be \"xy\", \"xz\" or \"yz\" (got \"zz\")", sim.render, sim,
    { path = "x.png", axis = "zz" })
  T.raises("sim:render: 'colormap' must be \"inferno\", \"viridis\" or \"gray\" (got \"jet\")",
    sim.render, sim, { path = "x.png", colormap = "jet" })
  T.raises("sim:render: 'extent' must be {xmin, xmax, ymin, ymax} with xmin < xmax and ymin < "
    .. "ymax", sim.render, sim, { path = "x.png", extent = { 1, 0, 0, 1 } })
  T.raises("sim:render: 'extent' must be a positive half-width or {xmin, xmax, ymin, ymax} "
    .. "(got -1)", sim.render, sim, { path = "x.png", extent = -1 })
  T.raises("sim:render: 'log' must be true or false (got 1)", sim.render, sim,
    { path = "x.png", log = 1 })
end)

-- the whole of a file
local function slurp(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

T.test("render: frames on disk at flush, checkpoint and close", function()
  local sim = cpu{ bodies = orrery.ic.plummer{ n = 500 } }
  local frames = {}
  for k = 1, 8 do frames[k] = sim:render{ path = path("bg/f_%02d.png"), width = 96, height = 96 } end
  sim:flush()
  for k = 1, 8 do T.eq(slurp(frames[k]):sub(1, 8), "\137PNG\r\n\26\n", frames[k]) end
  sim:flush()   -- nothing left: returns at once
  local c = sim:render(path("bg/c.png"))
  sim:checkpoint(path("bg/c.hdf5"))
  T.ok(exists(c), "a frame before a checkpoint")
  local z = sim:render(path("bg/z.png"))
  sim:close()
  T.ok(exists(z), "a frame before close")
  T.raises("orrery.Sim: simulation is closed", sim.render, sim, path("bg/y.png"))
  T.raises("orrery.Sim: simulation is closed", sim.flush, sim)
  -- one path written over and over: the last frame stays
  local a <close> = cpu{ bodies = orrery.ic.plummer{ n = 500 } }
  for k = 1, 6 do
    a:step(1)
    a:render{ path = path("bg/same.png"), width = 64, height = 64 }
  end
  a:flush()
  local last = slurp(path("bg/same.png"))
  a:render{ path = path("bg/last.png"), width = 64, height = 64 }
  a:flush()
  T.eq(last, slurp(path("bg/last.png")), "the last frame of one path")
end)

T.test("render: a frame that cannot be written", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 100 } }
  local plain = path("plain")
  os.execute("mkdir -p '" .. tmp .. "' && : > '" .. plain .. "'")
  local want = ("cannot write '%s/x.png': '%s' is not a directory (a frame written in the "
    .. "background)"):format(plain, plain)
  -- reported by sim:flush, once
  T.eq(sim:render(plain .. "/x.png"), plain .. "/x.png")
  T.raises(want, sim.flush, sim)
  sim:flush()
  -- or by a later render, which then writes nothing; the ones after go on
  sim:render(plain .. "/x.png")
  local raised
  for k = 1, 20 do
    local ok, err = pcall(sim.render, sim, path(("later_%02d.png"):format(k)))
    if not ok then raised = k T.eq(err:gsub("^[^:]*:%d+: ", ""), want) break end
  end
  T.ok(raised, "a later render raises")
  T.ok(not exists(path(("later_%02d.png"):format(raised))), "no frame from the render that raised")
  sim:render(path("after.png"))
  sim:flush()
  T.ok(exists(path("after.png")), "frames after the error")
  -- and by sim:run at its end (one frame, at step 0), and by sim:checkpoint
  T.raises(want, sim.run, sim, { steps = 1, progress = false, render_every = 2,
    render = plain .. "/x.png" })
  sim:render(plain .. "/x.png")
  T.raises(want, sim.checkpoint, sim, path("ck.hdf5"))
  T.ok(not exists(path("ck.hdf5")), "no checkpoint after a failed frame")
end)

os.execute("rm -rf '" .. tmp .. "'")
T.done()
