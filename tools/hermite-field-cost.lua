-- tools/hermite-field-cost.lua: what a field costs the Hermite block steps
-- on the GPU.  Wall seconds of sim:run over T time units (after one
-- interval) of a Plummer sphere of N bodies (N-body units, eta 0.02,
-- softening 4/N, default launches): without fields; with a weak plummer
-- field, and with milky_way (natural units), each in a frame 100 units
-- out, so that the blocks are the same; milky_way in float too.
--   orrery run tools/hermite-field-cost.lua [N] [T]
local orrery = require "orrery"
local n, T = tonumber(arg[1]) or 32768, tonumber(arg[2]) or 0.125
local out = {}
for _, mode in ipairs{ "none", "plummer", "milky_way", "milky_way_float" } do
  local o = { bodies = orrery.ic.plummer{ n = n, seed = 7 }, precision = mode == "milky_way_float" and "float" or "double",
              integrator = "hermite", dt_max = 1 / 16, eta = 0.02, softening = 4 / n, tune = false }
  if mode ~= "none" then
    o.fields = { mode == "plummer" and orrery.field("plummer", { M = 1e-3, b = 1 }) or "milky_way" }
    o.frame = { center = { 100, 0, 0 }, velocity = { 0, 0.5, 0 } }
  end
  local sim <close> = orrery.simulation(o)
  sim:run{ steps = 1, progress = false }
  local r = sim:run{ ["until"] = sim.time + T, progress = false }
  out[#out + 1] = ("%s %.3f s (%d blocks)"):format(mode, r.seconds, sim.blocks.blocks)
end
print(n, T, table.concat(out, "; "))
