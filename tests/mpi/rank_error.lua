-- rank_error: rank 1 fails after a few steps while the others go on
-- stepping (and would wait in the next exchange for ever): every rank must
-- end, non-zero, with one message naming rank 1.  Also prints the run log,
-- which must appear once.
local orrery = require "orrery"
local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 64, seed = 5 },
  backend = "cpu", dt = 1e-3 }
sim:run{ steps = 10, every = 5 }
if orrery.rank == 1 then error("boom on rank 1") end
sim:step(100000000)
