-- watched: regularised groups on the GPU's block loop, for compute-sanitizer
-- (tests/gpu_sanitize.sh): an unsoftened cluster of 256 bodies with a hard
-- eccentric binary in it, so that the persistent kernel is watched by the
-- host (orr_hinterval_watched): it stops before the blocks of the group's
-- centre and perturbers and after those where a close pair may form, the
-- state read back and written at each stop; then block by block
-- (sim:step(), one block per run).
local orrery = require "orrery"
local n, a, e = 256, 1e-4, 0.9
local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = n, seed = 11 },
  precision = "double", softening = 0, integrator = "hermite", dt_max = 1 / 16, eta = 0.02,
  regularize = true, backend = "cuda", tune = false }
local v = math.sqrt(2 / n * (1 - e) / (a * (1 + e)))
sim:set_body(1, { x = 0.3 + a * (1 + e) / 2, y = 0, z = 0, vx = 0, vy = v / 2, vz = 0 })
sim:set_body(2, { x = 0.3 - a * (1 + e) / 2, y = 0, z = 0, vx = 0, vy = -v / 2, vz = 0 })
sim:run{ steps = 2, progress = false }
for _ = 1, 40 do sim:step() end
print(("watched: %d blocks"):format(sim.blocks.blocks))
