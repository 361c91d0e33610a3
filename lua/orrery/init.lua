-- orrery: the module `require "orrery"` returns.  The C core (module
-- "orrery.core": simulation, ic, Sim, version) with the Lua-side methods
-- added to orrery.Sim (the method table of every simulation).
local orrery = require "orrery.core"
require "orrery.run"   -- Sim:run
require "orrery.view"  -- Sim:view (a live view in a browser)
require("orrery.agree").install()   -- over several ranks: every collective call compared first
-- Messages name functions by their place in package.loaded: 'orrery.simulation'
-- (not 'orrery.core.simulation') and, for methods called as functions,
-- 'orrery.Sim.step'.  A later require "orrery.core" gets the same table.
package.loaded["orrery.core"] = nil
package.preload["orrery.core"] = function() return orrery end
package.loaded["orrery.Sim"] = orrery.Sim
return orrery
