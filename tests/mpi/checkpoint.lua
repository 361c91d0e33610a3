-- checkpoint: a run that stops and goes on, on any number of ranks (CPU);
-- yoshida4 steps, or with ORRERY_TEST_HERMITE=1 hermite block steps (each
-- body's own step and its acceleration and jerk are in the checkpoint), or
-- with ORRERY_TEST_FRAME=1 in external fields and a frame (float).
--   orrery run tests/mpi/checkpoint.lua start CKPT STEPS     a fresh run, STEPS steps, checkpoint
--   orrery run tests/mpi/checkpoint.lua resume CKPT STEPS OUT  CKPT restored, STEPS more, bodies to OUT
--   orrery run tests/mpi/checkpoint.lua straight OUT STEPS    STEPS steps in one go, bodies to OUT
local orrery = require "orrery"
local mode, path, steps, out = arg[1], arg[2], math.tointeger(tonumber(arg[3])), arg[4]

local function fresh()
  if os.getenv("ORRERY_TEST_FRAME") == "1" then   -- external fields and a frame that follows
    local tide = orrery.field{ name = "tide", params = { k = 0.02 }, runtime_params = { "k" },
                               potential = "k*(x*x - z*z)*(1 + t)" }
    return orrery.simulation{ bodies = orrery.ic.plummer{ n = 89, seed = 23, radius = 0.05 },
      backend = "cpu", integrator = "yoshida4", precision = "float", dt = 1e-3,
      fields = { "milky_way", tide }, frame = { center = { 8, 0, 0.1 }, velocity = { 0, 1.1, 0.05 } } }
  end
  if os.getenv("ORRERY_TEST_HERMITE") == "1" then
    return orrery.simulation{ bodies = orrery.ic.plummer{ n = 89, seed = 22 }, backend = "cpu",
      integrator = "hermite", precision = "double", dt_max = 1 / 32, softening = 0.01 }
  end
  return orrery.simulation{ bodies = orrery.ic.plummer{ n = 89, seed = 21 }, backend = "cpu",
    integrator = "yoshida4", dt = 1e-3 }
end

if mode == "start" then
  local sim <close> = fresh()
  sim:run{ steps = steps, progress = false }   -- intervals of dt_max with block steps
  sim:checkpoint(path)
elseif mode == "resume" then
  local sim <close> = orrery.restore(path)
  sim:run{ steps = steps, progress = false }   -- intervals of dt_max with block steps
  sim:write(out)
elseif mode == "straight" then
  local sim <close> = fresh()
  sim:run{ steps = steps, progress = false }   -- intervals of dt_max with block steps
  sim:write(path)
else
  error("mode must be start, resume or straight")
end
