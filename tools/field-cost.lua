-- tools/field-cost.lua: what an external field and a frame cost a force pass.
-- ms per leapfrog step of N bodies (a 1e5 Msun Plummer cluster, pc and
-- Msun, default kernel configuration): without fields, with milky_way,
-- and with milky_way in a frame at 8 kpc; two rounds, alternating.
--   orrery run tools/field-cost.lua [N] [float|double]
local orrery = require "orrery"
local n = tonumber(arg[1]) or 65536
local units = { length = "pc", mass = "Msun" }
local res = {}
for round = 1, 2 do
  for _, mode in ipairs{ "none", "fields", "frame" } do
    local o = { bodies = orrery.ic.plummer{ n = n, seed = 5, mass = 1e5, radius = 10 }, units = units,
                precision = arg[2] or "float", dt = 1e-4, softening = 0.1, tune = false }
    if mode ~= "none" then o.fields = { "milky_way" } end
    if mode == "frame" then o.frame = { center = { 8000, 0, 0 }, velocity = { 0, 3000, 0 } } end
    local sim <close> = orrery.simulation(o)
    sim:run{ steps = 5, progress = false }
    local r = sim:run{ steps = 40, progress = false }
    res[#res + 1] = ("%s %.4f"):format(mode, r.seconds / 40 * 1e3)
  end
end
print(n, arg[2] or "float", "ms/step: " .. table.concat(res, "; "))
