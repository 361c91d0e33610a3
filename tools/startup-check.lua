-- startup-check: on the GPU machine, what a start costs with a stored tuning
-- (against tune=false), that a new force law gets its own tuning (first start
-- "tuned", second "store"), and the per-step host overhead of sim:step at
-- small N against the force kernel alone (orrery bench's "force ms").
--   orrery run tools/startup-check.lua [N...]
local orrery = require "orrery"
local clock = orrery._clock
local warm <close> = orrery.simulation{ n = 1024, tune = false }   -- CUDA context, kernels
local function created(opts)
  local t0 = clock()
  local s = orrery.simulation(opts)
  return s, (clock() - t0) * 1e3
end
local ns = #arg > 0 and arg or { "4096", "65536" }
for _, a in ipairs(ns) do
  local n = math.tointeger(tonumber(a))
  local s0, t_off = created{ n = n, tune = false }
  local s1, t_first = created{ n = n }
  local s2, t_stored = created{ n = n }
  print(("N=%d start-up: tune=false %.1f ms; first start %.1f ms (%s); stored tuning %.1f ms (%s): +%.1f ms"):format(
    n, t_off, t_first, s1.config.source, t_stored, s2.config.source, t_stored - t_off))
  s0:close(); s1:close()
  s2:load(orrery.ic.plummer{ n = n, seed = 1 })
  s2:step(10); s2:sync()
  local steps = n <= 8192 and 5000 or 200
  local t0 = clock()
  s2:step(steps); s2:sync()
  local us = (clock() - t0) * 1e6 / steps
  print(("N=%d sim:step: %.2f us per step (leapfrog; block %d unroll %d split %d)"):format(
    n, us, s2.config.block, s2.config.unroll, s2.config.split))
  s2:close()
end
local law = orrery.force{ name = "startup_check_law", params = { lambda = 0.7 }, scale = "G",
  pair = [[ real inv = orr_rsqrt_nz(r2), x = r2 * inv / lambda;
            f = mj * orr_exp(-x) * (1 + x) * (inv * inv * inv); ]],
  potential = [[ real inv = orr_rsqrt_nz(r2); u = -(mi * mj) * orr_exp(-r2 * inv / lambda) * inv; ]] }
local a, ta = created{ n = 65536, force = law }
local b, tb = created{ n = 65536, force = law }
print(("new law: first start %s (%.0f ms, block %d unroll %d split %d), second %s (%.1f ms)"):format(
  a.config.source, ta, a.config.block, a.config.unroll, a.config.split, b.config.source, tb))
