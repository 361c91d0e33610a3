-- variants: one short run of each GPU kernel variant, small enough for
-- compute-sanitizer's racecheck (whose cost grows with every shared-memory
-- access; tests/gpu_sanitize.sh): the tiled force kernel over block, unroll,
-- split, bodies per thread and j-ranges, in float and double, with a tail
-- that fills no whole tile; a user law with an attribute; the potential;
-- kick and drift; Hermite block steps in float, double and mixed, their
-- force + jerk kernel in every tile and j-split (sim:tune); and the
-- pictures' density deposit (float and double).
--   orrery run tests/sanitize/variants.lua
local orrery = require "orrery"
local n = 1000 + 37
local kernels = {
  { block = 64, unroll = 4, split = 1, ipt = 1 }, { block = 128, unroll = 16, split = 2, ipt = 1 },
  { block = 256, unroll = 8, split = 1, ipt = 2, ranges = 3 }, { block = 96, unroll = 32, split = 1, ipt = 4 },
  { block = 64, unroll = 1, split = 16, ipt = 2 }, { block = 512, unroll = 4, split = 8, ipt = 1, ranges = 2 },
}
for _, prec in ipairs{ "float", "double" } do
  for _, k in ipairs(kernels) do
    local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = n, seed = 3 },
      backend = "cuda", precision = prec, kernel = k, dt = 1e-3 }
    sim:step(2)
    local e = sim:energy()
    assert(e.total == e.total, "energy is a number")
  end
end
local screened = orrery.force{ name = "screened_san", params = { lambda = 0.7 },
  attributes = { "charge" },
  pair = "real inv = orr_rsqrt_nz(r2), x = r2 * inv / lambda; f = -charge_i * charge_j * orr_exp(-x) * (1 + x) * (inv * inv * inv);" }
local sim <close> = orrery.simulation{ bodies = orrery.ic.uniform_cube{ n = n, seed = 4, side = 4 },
  backend = "cuda", force = screened, softening = 0.05, dt = 1e-3, tune = false }
for i = 1, n do sim:set_attribute("charge", i, i % 2 == 0 and 1 or -1) end
sim:step(2)
for _, prec in ipairs{ "float", "double", "mixed" } do
  local h <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 300, seed = 5 }, backend = "cuda",
    precision = prec, integrator = "hermite", dt_max = 1 / 64, softening = 0.01, tune = false }
  h:run{ steps = 1, progress = false }
  h:tune{ budget = 0.3 }   -- the force + jerk kernel in every tile and j-split
  h:run{ steps = 1, progress = false }
end
local dir = os.getenv("TEST_TMP") or "/tmp"
for _, prec in ipairs{ "float", "double" } do
  local r <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = n, seed = 6 }, backend = "cuda",
    precision = prec, dt = 1e-3, tune = false }
  r:render{ path = dir .. "/variants_" .. prec .. ".png", width = 96, height = 64 }
  r:step(1)
  r:render{ path = dir .. "/variants_" .. prec .. "_2.png", width = 96, height = 64 }
  r:flush()
end
print("variants: every kernel variant ran")
