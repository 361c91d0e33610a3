-- yukawa.lua: a user-defined force law, compiled at run time for the GPU and
-- the CPU: screened Coulomb (Yukawa) forces between charged dust grains, as
-- in a dusty plasma.  lambda (the screening length) is baked into the kernel;
-- k (the coupling) is a runtime param, so halving it mid-run costs no
-- recompile.  Grains start at rest in a cube with random charges of both
-- signs; a weak damping (euler) lets them settle into a screened crystal.
--   orrery run scripts/yukawa.lua [N] [STEPS]
local orrery = require "orrery"

local n = math.tointeger(tonumber(arg[1])) or 2048
local steps = math.tointeger(tonumber(arg[2])) or 400

local yukawa = orrery.force{
  name = "yukawa",
  params = { lambda = 0.5, k = 1.0 },   -- baked in as exact constants
  runtime_params = { "k" },             -- a kernel argument instead
  attributes = { "charge" },            -- per-body values
  scale = "k",                          -- applied once per body
  pair = [[
    real inv = orr_rsqrt_nz(r2), r = r2 * inv, x = r / lambda;
    f = -(charge_i / mi) * charge_j * orr_exp(-x) * (1 + x) * (inv * inv * inv);
  ]],
  potential = [[
    real inv = orr_rsqrt_nz(r2);
    u = charge_i * charge_j * orr_exp(-r2 * inv / lambda) * inv;
  ]],
}

local sim <close> = orrery.simulation{
  bodies = orrery.ic.uniform_cube{ n = n, seed = 7, side = 8 },
  force = yukawa, softening = 0.02, dt = 2e-3, integrator = "euler", damping = 0.98,
}
for i = 1, n do
  sim:set_attribute("charge", i, (i % 2 == 0 and 1 or -1) * (0.5 + (i * 7919 % 1000) / 1000))
  sim.mass[i] = 1.0
end
print(("Yukawa grains: %d bodies on %s, lambda = %g, k = %g"):format(sim.n, sim.backend,
  sim:param("lambda"), sim:param("k")))
sim:run{ steps = steps // 2, every = math.max(1, steps // 8) }
print(("k -> 0.5 (runtime param, recompiled: %s)"):format(tostring(sim:set_param("k", 0.5))))
sim:run{ steps = steps - steps // 2, every = math.max(1, steps // 8) }
