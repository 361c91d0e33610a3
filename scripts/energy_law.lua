-- energy_law.lua: force laws from their energy, and laws checked against
-- themselves.  A star cluster with a Plummer-softened gravity plus a
-- short-range Yukawa attraction, written as one pair energy; orrery
-- differentiates it into the force and the jerk (so the Hermite integrator
-- runs it with no derivative written by hand), and law:check compares the
-- made snippets with finite differences of the energy.  Then a hand-written
-- law with a mistake in its jerk, which law:check names.
--   orrery run scripts/energy_law.lua [N] [T]
local orrery = require "orrery"

local n = math.tointeger(tonumber(arg[1])) or 1024
local t_end = tonumber(arg[2]) or 0.25

local law = orrery.force{
  name = "gravity_yukawa",
  params = { alpha = 0.3, lambda = 0.05 },
  scale = "G",
  finite_at_zero = true,
  -- gravity, plus an attraction of strength alpha and range lambda
  energy = "-mi*mj*(1 + alpha*exp(-x))/r; x = r/lambda",
}
print("the force orrery made from the energy:")
print(law.pair)

local check = law:check{ eps = 0.01 }
print(("law:check: %s (%d separations; force %.1e, jerk %.1e)"):format(
  check.ok and "ok" or check.message, check.compared, check.force.max_rel, check.jerk.max_rel))

local sim <close> = orrery.simulation{
  bodies = orrery.ic.plummer{ n = n, seed = 11 }, force = law, precision = "double",
  integrator = "hermite", dt_max = 1 / 16, eta = 0.02, softening = 0.01 }
local e0 = sim:energy().total
sim:run{ ["until"] = t_end, progress = false }
local b = sim.blocks
print(("t = %g: %d blocks of %.1f active bodies on average, dE/E0 = %.2e (%s)"):format(
  sim.time, b.blocks, b.active / b.blocks, (sim:energy().total - e0) / math.abs(e0),
  sim.backend))

-- a hand-written power law whose jerk is twice the true one: it would run
-- the Hermite integrator with far more block steps and no other sign
local power = orrery.force{
  name = "power", params = { p = 2.5 },
  pair = "f = mj * orr_pow(r2, -p / 2 - 1);",
  potential = "u = -mi * mj / p * orr_pow(r2, -p / 2);",
  jerk = "g = (-p / 2 - 1) * f / r2 * 2;",
}
print("law:check of a law with a mistake: " .. power:check().message)
