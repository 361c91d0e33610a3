-- test_fewbody: orrery.fewbody{}, a few bodies by algorithmic
-- regularisation (core/integrate/ar.h), against analytic solutions: a
-- binary of eccentricity 0.99 over 10^4 orbits (energy and phase against
-- Kepler's equation), the cost at eccentricities 0.9, 0.99 and 0.999, a
-- hyperbolic encounter's deflection, and the errors.  Burrau's problem
-- against REBOUND is in tests/test_rebound.py.
local T = dofile(arg[0]:match("^(.*/)") .. "testlib.lua")
local orrery = require "orrery"

-- a binary of masses 0.5 + 0.5 (G M = 1), semi-major axis 1, at pericentre
local function binary(e)
  local rp, vp = 1 - e, math.sqrt((1 + e) / (1 - e))
  return orrery.fewbody{ bodies = { { x = -0.5 * rp, vy = -0.5 * vp, m = 0.5 },
                                    { x = 0.5 * rp, vy = 0.5 * vp, m = 0.5 } } }
end

-- the relative position on the Kepler ellipse at time t (n = 1)
local function kepler(e, t)
  local M = math.fmod(t, 2 * math.pi)
  local E = M
  for _ = 1, 100 do
    local d = (E - e * math.sin(E) - M) / (1 - e * math.cos(E))
    E = E - d
    if math.abs(d) < 1e-16 then break end
  end
  return math.cos(E) - e, math.sqrt(1 - e * e) * math.sin(E)
end

T.test("a binary of e = 0.99 over 10^4 orbits: energy and phase against Kepler", function()
  local e = 0.99
  local fb = binary(e)
  local e0 = fb:energy()
  local t = 2 * math.pi * 1e4
  fb:advance(t)
  T.eq(fb.time, t)
  local a, b = fb:body(1), fb:body(2)
  local kx, ky = kepler(e, t)
  local dphi = math.abs(math.atan(b.y - a.y, b.x - a.x) - math.atan(ky, kx))
  local de = math.abs((fb:energy() - e0) / e0)
  print(("    %d steps, %d kicks: |dE/E| %.1e, phase %.1e of an orbit"):format(fb.steps,
    fb.kicks, de, dphi / (2 * math.pi)))
  T.ok(de < 1e-10, "energy " .. de)
  T.ok(dphi / (2 * math.pi) < 1e-6, "phase " .. dphi / (2 * math.pi))
end)

T.test("the cost does not depend on the eccentricity (0.9, 0.99, 0.999)", function()
  local kicks = {}
  for _, e in ipairs{ 0.9, 0.99, 0.999 } do
    local fb = binary(e)
    fb:advance(2 * math.pi * 100)
    kicks[#kicks + 1] = fb.kicks
  end
  local lo, hi = math.min(table.unpack(kicks)), math.max(table.unpack(kicks))
  print(("    kicks for 100 orbits: %d, %d, %d"):format(table.unpack(kicks)))
  T.ok(hi / lo < 1.5, ("%d against %d"):format(hi, lo))
end)

-- a hyperbolic conic's asymptotic directions from a state (G M = 1, relative)
local function asymptotes(x, y, vx, vy)
  local r, v2 = math.sqrt(x * x + y * y), vx * vx + vy * vy
  local h = x * vy - y * vx
  local ex, ey = vy * h - x / r, -vx * h - y / r   -- the eccentricity vector
  local e = math.sqrt(ex * ex + ey * ey)
  local px, py = ex / e, ey / e
  local qx, qy = -py * (h > 0 and 1 or -1), px * (h > 0 and 1 or -1)
  local c, s = -1 / e, math.sqrt(1 - 1 / (e * e))   -- cos and sin of the asymptote's anomaly
  return { -(c * px - s * qx), -(c * py - s * qy) },   -- incoming velocity direction
         { c * px + s * qx, c * py + s * qy }, e, v2 / 2 - 1 / r, h
end

T.test("a hyperbolic encounter's deflection against the analytic angle", function()
  -- from 200 apart, speed at infinity 0.6, moving along x at 0.8 off the axis
  -- (the conic's own impact parameter and speed at infinity give the angle)
  local vinf, b = 0.6, 0.8
  local x, y = -200, b
  local vx, vy = math.sqrt(vinf ^ 2 + 2 / math.sqrt(x * x + y * y)), 0
  local fb = orrery.fewbody{ bodies = { { x = x / 2, y = y / 2, vx = vx / 2, vy = vy / 2, m = 0.5 },
                                        { x = -x / 2, y = -y / 2, vx = -vx / 2, vy = -vy / 2, m = 0.5 } } }
  local function rel()
    local p, q = fb:body(1), fb:body(2)
    return p.x - q.x, p.y - q.y, p.vx - q.vx, p.vy - q.vy
  end
  local uin, _, e0, en0, h0 = asymptotes(rel())
  fb:advance(2 * 200 / vinf)   -- to as far on the other side
  local _, uout = asymptotes(rel())
  local measured = math.acos(uin[1] * uout[1] + uin[2] * uout[2])
  local bb = math.abs(h0) / math.sqrt(2 * en0)
  local analytic = 2 * math.atan(1 / (bb * 2 * en0))
  print(("    deflection %.15f rad, analytic %.15f (e = %.6f)"):format(measured, analytic, e0))
  T.near(measured, analytic, 1e-10)
end)

T.test("a hyperbola of pericentre 1e-5 out to 0.84 in 40 advances: the time and turn of the conic", function()
  -- past r = 0.2 T and -B are thousands of times U: the leapfrog's T + B,
  -- formed as a sum, made the steps collapse to s ~ 5e-15 (a stall)
  local e, q = 1.5, 1e-5
  local ah, p = q / (e - 1), q * (1 + e)
  local f0 = -math.acos((p / 0.05 - 1) / e)
  local h = math.sqrt(p)
  local r0 = p / (1 + e * math.cos(f0))
  local vr, vt = e * math.sin(f0) / h, (1 + e * math.cos(f0)) / h
  local x, y = r0 * math.cos(f0), r0 * math.sin(f0)
  local vx, vy = vr * math.cos(f0) - vt * math.sin(f0), vr * math.sin(f0) + vt * math.cos(f0)
  local fb = orrery.fewbody{ bodies = { { x = -x / 2, y = -y / 2, vx = -vx / 2, vy = -vy / 2, m = 0.5 },
                                        { x = x / 2, y = y / 2, vx = vx / 2, vy = vy / 2, m = 0.5 } } }
  local e0 = fb:energy()
  for k = 1, 40 do fb:advance(0.004 * k / 40) end
  local a, b = fb:body(1), fb:body(2)
  local d = math.sqrt((b.x - a.x) ^ 2 + (b.y - a.y) ^ 2)
  local f1 = math.acos((p / d - 1) / e)
  -- the time from f0 to f1 on the conic (hyperbolic anomaly F: tanh(F/2) =
  -- sqrt((e-1)/(e+1)) tan(f/2), t = sqrt(a^3) (e sinh F - F))
  local function tof(f)
    local z = math.sqrt((e - 1) / (e + 1)) * math.tan(f / 2)
    local F = math.log((1 + z) / (1 - z))
    return math.sqrt(ah ^ 3) * (e * math.sinh(F) - F)
  end
  T.ok(d > 0.8, "out at " .. d)
  T.near(math.atan(b.y - a.y, b.x - a.x) - math.atan(y, x), f1 - f0, 1e-10, "the turn")
  T.near(tof(f1) - tof(f0), 0.004, 1e-9 * 0.004, "the time")
  T.near((fb:energy() - e0) / math.abs(e0), 0, 1e-12, "energy")
  T.ok(fb.kicks < 20000, "force evaluations " .. fb.kicks)
end)

T.test("a binary from t = 1e4 over 10^4 orbits keeps its phase: the clock's sum compensated", function()
  -- each step's time added to 1e4 rounded by up to 1e-12 (of a period of
  -- 2e-4): the phase drifted by 6e-7 of an orbit; as from t = 0 now
  local a, e = 1e-3, 0.5
  local n = math.sqrt(1 / a ^ 3)
  local P = 2 * math.pi / n
  local rp, vp = a * (1 - e), math.sqrt((1 + e) / (a * (1 - e)))
  local fb = orrery.fewbody{ bodies = { { x = -0.5 * rp, vy = -0.5 * vp, m = 0.5 },
                                        { x = 0.5 * rp, vy = 0.5 * vp, m = 0.5 } }, t = 1e4 }
  fb:advance(1e4 + 1e4 * P)
  local A, B = fb:body(1), fb:body(2)
  local f = math.atan(B.y - A.y, B.x - A.x)
  local E = 2 * math.atan(math.sqrt((1 - e) / (1 + e)) * math.tan(f / 2))
  local d = ((E - e * math.sin(E)) / n - math.fmod(fb.time - 1e4, P)) / P
  d = d - math.floor(d + 0.5)
  print(("    phase after 10^4 orbits from t = 1e4: %.3e of an orbit"):format(d))
  T.near(d, 0, 1e-9, "phase (orbits)")
end)

T.test("bad input is refused, naming it", function()
  local two = { { x = 1, m = 1 }, { x = -1, m = 1 } }
  T.raises("orrery.fewbody: 2 to 16 bodies (got 1)", orrery.fewbody, { bodies = { { m = 1 } } })
  T.raises("orrery.fewbody: regularised group: body 2's mass must be positive (got 0)",
    orrery.fewbody, { bodies = { { x = 1, m = 1 }, { x = -1, m = 0 } } })
  T.raises("orrery.fewbody: regularised group: bodies 1 and 2 are at the same place",
    orrery.fewbody, { bodies = { { m = 1 }, { m = 1 } } })
  T.raises("^orrery.fewbody: unknown key 'dt'", orrery.fewbody, { bodies = two, dt = 1 })
  T.raises("orrery.fewbody: 'tol' must be a number from 1e-16 to 1e-6 (got 0.1)",
    orrery.fewbody, { bodies = two, tol = 0.1 })
  T.raises("orrery.fewbody: body 2: 'vx' must be a finite number (got inf)", orrery.fewbody,
    { bodies = { { x = 1, m = 1 }, { x = -1, vx = 1 / 0, m = 1 } } })
  local fb = orrery.fewbody{ bodies = two }
  fb:advance(1)
  T.raises("^bad argument #1 to 'advance' %(time must be finite and >= the current time 1",
    fb.advance, fb, 0.5)
  T.eq(fb.n, 2); T.eq(fb.G, 1); T.eq(fb.tol, 1e-14)
  -- orrery.Bodies too
  local k = orrery.fewbody{ bodies = orrery.ic.kepler{ e = 0.5 } }
  T.eq(k.n, 2)
end)

T.done()
