-- test_movie: movies from scripts, sim:render{movie = "out.mp4"}: a movie
-- made over two sim:run calls (they leave it open), finished by sim:flush,
-- sim:close or the end of a checkpointed run's simulation, read back with
-- ffprobe (frame count, size, codec h264, yuv420p, duration = frames /
-- fps); PNG and movie from the same render; the messages for bad options,
-- a frame of another size, a finished movie and a movie that cannot be
-- written.  CPU backend, small N.  Skipped where ffprobe is missing.
local T = dofile(arg[0]:match("^(.*/)") .. "testlib.lua")
local orrery = require "orrery"

local tmp = (os.getenv("TEST_TMP") or "/tmp") .. "/movie-" .. math.random(1 << 30)
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

-- ffprobe's view of the video stream of p: codec_name, width, height,
-- pix_fmt, nb_read_frames (decoded), duration (numbers where numeric)
local function probe(p)
  local f = assert(io.popen("ffprobe -v error -count_frames -select_streams v:0 -show_entries "
    .. "stream=codec_name,width,height,pix_fmt,nb_read_frames,duration -of default=nw=1 '"
    .. p .. "' 2>&1"))
  local out = f:read("a")
  f:close()
  local r = {}
  for k, v in out:gmatch("([%w_]+)=([^\n]*)") do r[k] = tonumber(v) or v end
  if not r.codec_name then error("ffprobe cannot read " .. p .. ": " .. out, 2) end
  return r
end

if not os.execute("command -v ffprobe >/dev/null 2>&1") then
  T.skip("movies", "ffprobe (Debian's ffmpeg) is not installed")
  T.done()
  return
end

T.test("the slowest rate, 0.01 fps: a frame lasts 100 s", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 100, seed = 3 }, dt = 0.01 }
  local movie = path("slow.mp4")
  for _ = 1, 3 do
    sim:step(1)
    sim:render{ movie = movie, width = 32, height = 32, fps = 0.01 }
  end
  sim:flush()
  local p = probe(movie)
  T.eq(p.nb_read_frames, 3)
  T.near(p.duration, 300, 1e-6, "duration = frames / fps")
end)

T.test("a movie over two runs, finished by sim:flush", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 400, seed = 2 }, dt = 0.01 }
  local movie = path("runs/a.mp4")
  local opts = { movie = movie, width = 96, height = 64, fps = 10, crf = 23 }
  sim:run{ steps = 12, progress = false, render_every = 2, render = opts }   -- steps 0..12: 7
  T.ok(not exists(movie), "not in place while open")
  sim:run{ steps = 8, progress = false, render_every = 2, render = opts }    -- 14..20: 4
  T.eq(sim:render(opts), movie, "sim:render returns the movie's path")
  sim:flush()
  local p = probe(movie)
  T.eq(p.codec_name, "h264")
  T.eq(p.pix_fmt, "yuv420p")
  T.eq(p.width, 96)
  T.eq(p.height, 64)
  T.eq(p.nb_read_frames, 12)
  T.near(p.duration, 1.2, 1e-6, "duration = frames / fps")
  T.raises(("cannot add a frame to '%s': the movie was finished (by a flush) with 12 frames; a "
    .. "finished movie takes no more (give another path)"):format(movie), sim.render, sim, opts)
end)

T.test("PNG and movie from one render; close finishes", function()
  local sim = cpu{ bodies = orrery.ic.plummer{ n = 300, seed = 4 } }
  local movie = path("both/m.mp4")
  for k = 1, 5 do
    T.eq(sim:render{ path = path("both/f_%02d.png"), movie = movie, width = 64, height = 64 },
      path(("both/f_%02d.png"):format(k - 1)))
    sim:step(1)
  end
  sim:close()
  for k = 0, 4 do T.ok(exists(path(("both/f_%02d.png"):format(k))), "PNG " .. k) end
  local p = probe(movie)
  T.eq(p.nb_read_frames, 5)
  T.near(p.duration, 5 / 30, 1e-6, "30 fps by default")
end)

T.test("checkpoints and sim:flush{finish = false} leave a movie open", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 300, seed = 5 } }
  local movie = path("ck/m.mp4")
  sim:render{ movie = movie, width = 32, height = 32 }
  sim:checkpoint(path("ck/c.hdf5"))
  sim:render{ movie = movie, width = 32, height = 32 }
  sim:flush{ finish = false }
  T.ok(not exists(movie), "still open")
  sim:render{ movie = movie, width = 32, height = 32 }
  sim:flush{ finish = true }
  T.eq(probe(movie).nb_read_frames, 3)
  T.raises("sim:flush: 'finish' must be true or false (got 1)", sim.flush, sim, { finish = 1 })
  T.raises("sim:flush: unknown key 'finnish' (valid: finish)", sim.flush, sim, { finnish = true })
  T.raises("sim:flush: expected nothing or a table {finish = true or false} (got \"x\")",
    sim.flush, sim, "x")
end)

T.test("bad movie options", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 100 } }
  T.raises("sim:render: 'movie' must end in .mp4 (got \"x.avi\")", sim.render, sim,
    { movie = "x.avi" })
  T.raises("sim:render: 'movie' must be a file name ending in .mp4 (got true)", sim.render, sim,
    { movie = true })
  T.raises("sim:render: 'movie' is one file for every frame: no frame number in it (got "
    .. "\"m_%03d.mp4\")", sim.render, sim, { movie = "m_%03d.mp4" })
  T.raises("sim:render: 'fps' must be a number from 0.01 to 1000 (a frame lasts at most 100 s; "
    .. "got 0)", sim.render, sim, { movie = "x.mp4", fps = 0 })
  -- below FFmpeg's reach (the time base 1/fps): refused at once, nothing written
  T.raises("sim:render: 'fps' must be a number from 0.01 to 1000 (a frame lasts at most 100 s; "
    .. "got 1e-06)", sim.render, sim, { movie = "x.mp4", fps = 1e-6 })
  T.raises("sim:render: 'fps' must be a number from 0.01 to 1000 (a frame lasts at most 100 s; "
    .. "got 1e-300)", sim.render, sim, { movie = "x.mp4", fps = 1e-300 })
  T.raises("sim:render: 'crf' must be an integer from 0 (lossless) to 51 (got 52)", sim.render,
    sim, { movie = "x.mp4", crf = 52 })
  T.raises("sim:render: 'crf' must be an integer from 0 (lossless) to 51 (got 1.5)", sim.render,
    sim, { movie = "x.mp4", crf = 1.5 })
  T.raises("sim:render: 'fps' is a movie's option: give movie = \"out.mp4\" too", sim.render, sim,
    { path = "x.png", fps = 24 })
  T.raises("sim:render: 'crf' is a movie's option: give movie = \"out.mp4\" too", sim.render, sim,
    { path = "x.png", crf = 24 })
  local odd = path("odd.mp4")
  T.raises(("cannot write '%s': H.264 (4:2:0) needs an even width and height from 2 to 16384 "
    .. "(got 101x64)"):format(odd), sim.render, sim, { movie = odd, width = 101, height = 64 })
  local m = path("sizes.mp4")
  sim:render{ movie = m, width = 64, height = 48 }
  T.raises(("cannot add frame 2 to '%s': it is 64x64 but the movie's frames are 64x48 (every "
    .. "frame of a movie has its first frame's size)"):format(m), sim.render, sim,
    { movie = m, width = 64, height = 64 })
  T.raises(("cannot add frame 2 to '%s': fps 25 differs from the movie's (30, its first "
    .. "frame's)"):format(m), sim.render, sim, { movie = m, width = 64, height = 48, fps = 25 })
  sim:render{ movie = m, width = 64, height = 48 }
  sim:flush()
  T.eq(probe(m).nb_read_frames, 2, "the frames refused are not in it")
end)

T.test("a movie that cannot be written", function()
  local sim <close> = cpu{ bodies = orrery.ic.plummer{ n = 100 } }
  local plain = path("plain")
  os.execute("mkdir -p '" .. tmp .. "' && : > '" .. plain .. "'")
  local m = plain .. "/m.mp4"
  sim:render{ movie = m, width = 32, height = 32 }
  T.raises(("cannot write '%s': '%s' is not a directory (a frame written in the background)")
    :format(m, plain), sim.flush, sim)
  sim:flush()   -- reported once
end)

os.execute("rm -rf '" .. tmp .. "'")
T.done()
