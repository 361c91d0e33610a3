-- tools/egravity.lua: softened gravity written as an energy, for
--   orrery bench --tune --n 262144 --precision P --force tools/egravity.lua
-- against --force gravity (docs/PERFORMANCE.md, issue 28).
local orrery = require "orrery"
return orrery.force{ name = "egravity", scale = "G", finite_at_zero = true, energy = "-mi*mj/r" }
