-- blowup: a blow-up found over several ranks is said once, by rank 0,
-- naming the body and the rank whose slice holds it; every rank exits
-- non-zero.  Five unit masses under gravity cut off at distance 0.1 and
-- without a guard for two bodies on one spot (0 * inf = nan): bodies 4 and
-- 5 (on 2 ranks, in rank 1's slice 3..5) meet exactly at the end of the
-- first step, so their accelerations are the first non-finite ones (the
-- others follow a step later, from their positions).  INTEGRATOR
-- (leapfrog, dt 0.1, by default) may be hermite (dt_max 0.125).
--   mpirun -np 2 orrery run tests/mpi/blowup.lua [INTEGRATOR]
local orrery = require "orrery"
local integrator = arg[1] or "leapfrog"
local bad = orrery.force{ name = "unguarded", attributes = { "id" }, finite_at_zero = true,
  pair = "f = id_i != id_j && d2 < (real)0.01 ? mj / (d2 * orr_sqrt(d2)) : (real)0;",
  potential = "u = 0;",
  jerk = "g = id_i != id_j && d2 < (real)0.01 ? -3 * mj / (2 * d2 * d2 * orr_sqrt(d2)) : (real)0;" }
local opts = { n = 5, backend = "cpu", force = bad, softening = 0, precision = "double",
  integrator = integrator }
local h = integrator == "hermite" and 0.125 or 0.1
if integrator == "hermite" then opts.dt_max = h else opts.dt = h end
local sim <close> = orrery.simulation(opts)
local at = { { -6, 0, 0 }, { 0, 6, 0 }, { 6, 0, 0 }, { 0, 0, 1 }, { 0, 0, 1.5 } }
for i = 1, 5 do
  sim:set_body(i, { x = at[i][1], y = at[i][2], z = at[i][3], m = 1 })
  sim:set_attribute("id", i, i)
end
sim:set_body(5, { vz = -0.5 / h })   -- 1.5 - 0.5 = 1: at body 4 after one step, exactly
sim:run{ steps = 10, progress = false }   -- intervals of dt_max with hermite
