-- tests/rebound/burrau.lua: Burrau's Pythagorean three-body problem (masses
-- 3, 4, 5 at rest at (1, 3), (-2, -1), (1, -1), G = 1, no softening) to
-- t = 70 by orrery.fewbody (algorithmic regularisation), for
-- tests/test_rebound.py: prints each body's x y vx vy, one line each, and
-- the steps taken.
--   orrery run burrau.lua [TOL]
local orrery = require "orrery"
local fb = orrery.fewbody{ tol = tonumber(arg[1]) or 1e-14, bodies = {
  { x = 1, y = 3, m = 3 }, { x = -2, y = -1, m = 4 }, { x = 1, y = -1, m = 5 } } }
local e0 = fb:energy()
fb:advance(70)
for _, b in ipairs(fb:bodies()) do
  print(("%.17g %.17g %.17g %.17g"):format(b.x, b.y, b.vx, b.vy))
end
print(("steps %d kicks %d dE/E %.3g"):format(fb.steps, fb.kicks, (fb:energy() - e0) / e0))
