-- galaxy_collision.lua: two Plummer spheres on a bound orbit meet (first
-- passage near step 1000 of dt = 1/64), swing apart and fall back to merge.
-- Prints the energy log and, at the end, how far apart the two galaxies'
-- centres of mass are (and their closest approach on the way); writes a
-- snapshot at the end when OUT is given
-- (.txt, .csv, .hdf5 or .h5).  The word `frames` renders a PNG frame every
-- 4 steps into frames/ (frames=DIR for another folder); `movie` puts the
-- same frames into an MP4 movie, galaxy_collision.mp4 (movie=FILE.mp4 for
-- another), 30 frames a second; `checkpoint` keeps a rolling checkpoint
-- (every 100 steps) to continue with --resume.
--   orrery run scripts/galaxy_collision.lua [N] [STEPS] [OUT] [frames[=DIR]] [movie[=FILE]] [checkpoint]
--   orrery run scripts/galaxy_collision.lua frames
--   orrery run scripts/galaxy_collision.lua movie
--   orrery run --resume galaxy_collision.ckpt.hdf5 scripts/galaxy_collision.lua frames
local orrery = require "orrery"

local args, frames, movie, checkpoint = {}, nil, nil, false
for _, a in ipairs(arg) do
  if a == "frames" then frames = "frames"
  elseif a:match("^frames=.") then frames = a:sub(8)
  elseif a == "movie" then movie = "galaxy_collision.mp4"
  elseif a:match("^movie=.") then movie = a:sub(7)
  elseif a == "checkpoint" then checkpoint = true
  elseif a == "frames=" or a == "movie=" then   -- refused now, not after the whole run
    error(("'%s' needs a name after '=' (e.g. %s)"):format(a,
      a == "movie=" and "movie=run.mp4" or "frames=out"))
  else args[#args + 1] = a end
end
if movie and not movie:lower():match("%.mp4$") then
  error(("movie=%s: the movie's name must end in .mp4"):format(movie))
end
local n = math.tointeger(tonumber(args[1])) or 2048
local steps = math.tointeger(tonumber(args[2])) or 1300
local out = args[3]
local mass_ratio = 0.5

-- a resumed run (orrery run --resume CKPT) continues where the checkpoint left off
local sim <close> = orrery.resumed or orrery.simulation{
  bodies = orrery.ic.galaxy_collision{ n = n, seed = 7, mass_ratio = mass_ratio,
                                       separation = 8, impact = 1.5, v_ratio = 0.6 },
  softening = 0.02, dt = 1 / 64,
}

-- The generator puts the first round(n / (1 + mass_ratio)) bodies in the
-- first galaxy, the rest in the second: the distance between their centres
-- of mass.
local n1 = math.min(math.max(math.floor(sim.n / (1 + mass_ratio) + 0.5), 1), sim.n - 1)
local function separation()
  local p, m = sim.pos:to_table(), sim.mass:to_table()
  local c = { { 0, 0, 0, 0 }, { 0, 0, 0, 0 } }
  for i = 1, sim.n do
    local g = c[i <= n1 and 1 or 2]
    g[1], g[2], g[3] = g[1] + m[i] * p[3 * i - 2], g[2] + m[i] * p[3 * i - 1], g[3] + m[i] * p[3 * i]
    g[4] = g[4] + m[i]
  end
  local a, b = c[1], c[2]
  return math.sqrt((a[1] / a[4] - b[1] / b[4]) ^ 2 + (a[2] / a[4] - b[2] / b[4]) ^ 2
    + (a[3] / a[4] - b[3] / b[4]) ^ 2)
end
local start_sep, start_step = separation(), sim.steps
local closest, closest_step = start_sep, start_step
local todo = math.max(0, steps - sim.steps)
print(("galaxy collision: %d bodies on %s, %d steps of %g%s"):format(sim.n, sim.backend, todo,
  sim.dt, orrery.resumed and (" from step " .. sim.steps) or ""))
local opts = { steps = todo, every = math.max(1, steps // 8) }
opts.on_step = function(s)   -- the closest approach, sampled every 10 steps
  if s.steps % 10 == 0 then
    local d = separation()
    if d < closest then closest, closest_step = d, s.steps end
  end
end
if frames or movie then
  opts.render_every = 4
  opts.render = { path = frames and frames .. "/galaxy_%04d.png", movie = movie, width = 800,
                  height = 800 }
end
if checkpoint then
  opts.checkpoint_every = 100
  opts.checkpoint = "galaxy_collision.ckpt.hdf5"
end
sim:run(opts)
if movie then
  sim:flush()   -- the movie finished (sim:run leaves it open for more frames)
  print("wrote " .. movie)
end
print(("centres of mass of the two galaxies: %.3f apart at step %d (%.3f at step %d; "
  .. "closest %.3f at step %d)"):format(separation(), sim.steps, start_sep, start_step, closest,
  closest_step))
if out then
  print("wrote " .. sim:write(out))
end
