-- tests/rebound/burrau.lua: Burrau's Pythagorean three-body problem (masses
-- 3, 4, 5 at rest at (1, 3), (-2, -1), (1, -1), G = 1, no softening) to
-- t = 70, for tests/test_rebound.py: by orrery.fewbody (algorithmic
-- regularisation of the three; TOL its tolerance), or with "hermite" by
-- the Hermite block steps with regularize = {r_close = 5} (the close pairs
-- and the triple leave the block steps for the same regularisation, and the
-- escaper comes out of it).  Prints each body's x y vx vy, one line each,
-- and the steps taken.
--   orrery run burrau.lua [TOL | hermite]
local orrery = require "orrery"
local bodies = { { x = 1, y = 3, m = 3 }, { x = -2, y = -1, m = 4 }, { x = 1, y = -1, m = 5 } }
if arg[1] == "hermite" then
  local sim <close> = orrery.simulation{ bodies = bodies, backend = "cpu", precision = "double",
    softening = 0, integrator = "hermite", dt_max = 1 / 8, eta = 0.01,
    regularize = { r_close = 5 } }
  local e0 = sim:energy().total
  sim:advance(70)
  for _, b in ipairs(sim:bodies()) do
    print(("%.17g %.17g %.17g %.17g"):format(b.x, b.y, b.vx, b.vy))
  end
  print(("blocks %d groups %d dE/E %.3g"):format(sim.blocks.blocks, sim:binaries().count,
    (sim:energy().total - e0) / e0))
  return
end
local fb = orrery.fewbody{ tol = tonumber(arg[1]) or 1e-14, bodies = bodies }
local e0 = fb:energy()
fb:advance(70)
for _, b in ipairs(fb:bodies()) do
  print(("%.17g %.17g %.17g %.17g"):format(b.x, b.y, b.vx, b.vy))
end
print(("steps %d kicks %d dE/E %.3g"):format(fb.steps, fb.kicks, (fb:energy() - e0) / e0))
