-- galaxy_collision.lua: two Plummer spheres on a bound orbit merge.
-- Prints the energy log; writes a snapshot at the end when OUT is given
-- (.txt, .csv, .hdf5 or .h5).  The word `frames` renders a PNG frame every
-- 4 steps into frames/ (frames=DIR for another folder); `checkpoint` keeps a
-- rolling checkpoint (every 100 steps) to continue with --resume.
--   orrery run scripts/galaxy_collision.lua [N] [STEPS] [OUT] [frames[=DIR]] [checkpoint]
--   orrery run scripts/galaxy_collision.lua frames
--   orrery run --resume galaxy_collision.ckpt.hdf5 scripts/galaxy_collision.lua frames
local orrery = require "orrery"

local args, frames, checkpoint = {}, nil, false
for _, a in ipairs(arg) do
  if a == "frames" then frames = "frames"
  elseif a:match("^frames=.") then frames = a:sub(8)
  elseif a == "checkpoint" then checkpoint = true
  else args[#args + 1] = a end
end
local n = math.tointeger(tonumber(args[1])) or 4096
local steps = math.tointeger(tonumber(args[2])) or 400
local out = args[3]

-- a resumed run (orrery run --resume CKPT) continues where the checkpoint left off
local sim <close> = orrery.resumed or orrery.simulation{
  bodies = orrery.ic.galaxy_collision{ n = n, seed = 7, mass_ratio = 0.5,
                                       separation = 8, impact = 1.5, v_ratio = 0.6 },
  softening = 0.02, dt = 1 / 64,
}
local todo = math.max(0, steps - sim.steps)
print(("galaxy collision: %d bodies on %s, %d steps of %g%s"):format(sim.n, sim.backend, todo,
  sim.dt, orrery.resumed and (" from step " .. sim.steps) or ""))
local opts = { steps = todo, every = math.max(1, steps // 8) }
if frames then
  opts.render_every = 4
  opts.render = { path = frames .. "/galaxy_%04d.png", width = 800, height = 800 }
end
if checkpoint then
  opts.checkpoint_every = 100
  opts.checkpoint = "galaxy_collision.ckpt.hdf5"
end
sim:run(opts)
if out then
  print("wrote " .. sim:write(out))
end
