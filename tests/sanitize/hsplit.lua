-- hsplit: Hermite block steps split as between GPUs, for compute-sanitizer
-- (tests/gpu_sanitize.sh runs it with ORRERY_EXCHANGE=nccl ORRERY_HSPLIT=8:
-- one rank through NCCL, every block of 8 active bodies or more split, so
-- the persistent kernel stops at those and the split path's kernels, the
-- ordered list, the share's force + jerk and correction, the records and
-- their all-gather, run between its launches), in double and mixed.
local orrery = require "orrery"
for _, precision in ipairs{ "double", "mixed" } do
  local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 3001, seed = 19 },
    precision = precision, integrator = "hermite", dt_max = 1 / 16, eta = 0.02,
    softening = 1 / 256, backend = "cuda", tune = false }
  sim:run{ steps = 2, progress = false }
  print(("hsplit %s: %d blocks, %d active"):format(precision, sim.blocks.blocks, sim.blocks.active))
end
