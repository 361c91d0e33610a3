-- mismatch: rank 1 asks for one body more than rank 0; the simulation must
-- be refused on every rank, naming the difference.
local orrery = require "orrery"
local sim <close> = orrery.simulation{ n = 100 + orrery.rank, backend = "cpu" }
