-- pythagorean.lua: Burrau's Pythagorean three-body problem by orrery.fewbody
-- (algorithmic regularisation): masses 3, 4 and 5 at rest at the corners of
-- a 3-4-5 triangle, (1, 3), (-2, -1), (1, -1), G = 1, no softening.  After
-- a long dance of close encounters the lightest body escapes and the other
-- two leave as a tight, eccentric binary (Szebehely & Peters 1967).  Prints
-- the state every 10 time units, then the escaper's distance and the
-- binary's semi-major axis and eccentricity.
--   orrery run scripts/pythagorean.lua [T] [TOL]
local orrery = require "orrery"
local t_end = tonumber(arg[1]) or 70
local fb = orrery.fewbody{ tol = tonumber(arg[2]) or 1e-14, bodies = {
  { x = 1, y = 3, m = 3 }, { x = -2, y = -1, m = 4 }, { x = 1, y = -1, m = 5 } } }
local e0 = fb:energy()
print("     t    r(m=3)    r(m=4)    r(m=5)      dE/E0   steps")
local function line()
  local b = fb:bodies()
  local r = {}
  for i = 1, 3 do r[i] = math.sqrt(b[i].x ^ 2 + b[i].y ^ 2) end
  print(("%6.1f %9.4f %9.4f %9.4f %10.2e %7d"):format(fb.time, r[1], r[2], r[3],
    (fb:energy() - e0) / math.abs(e0), fb.steps))
end
line()
for t = 10, t_end, 10 do
  fb:advance(t)
  line()
end
if fb.time < t_end then fb:advance(t_end) line() end
-- the two heavier bodies' relative orbit
local b = fb:bodies()
local m = b[2].m + b[3].m
local dx, dy, dvx, dvy = b[3].x - b[2].x, b[3].y - b[2].y, b[3].vx - b[2].vx, b[3].vy - b[2].vy
local en = 0.5 * (dvx ^ 2 + dvy ^ 2) - m / math.sqrt(dx ^ 2 + dy ^ 2)
local h = dx * dvy - dy * dvx
print(("escaper (m = 3) at %.4f from the origin; binary a = %.5f, e = %.6f; %d kicks")
  :format(math.sqrt(b[1].x ^ 2 + b[1].y ^ 2), -m / (2 * en),
          math.sqrt(1 + 2 * en * h * h / (m * m)), fb.kicks))
