-- choices: what each rank decides for itself must be the same on every
-- rank before any rank acts on it (each is followed by collectives that
-- differ).  Each case is made inside pcall, so every rank must come back
-- with the same error, and then go on in step (a simulation stepped over
-- every rank afterwards).  Prints "RANK: create: ok|error MESSAGE", then
-- "RANK: done E".  The case is the test's environment:
--   ORRERY_TEST_RANK_BACKEND=1=cuda   rank 1's backend "auto" finds a GPU
--   ORRERY_EXCHANGE set on one rank  the exchange each rank reads
--   ORRERY_HSPLIT / ORRERY_HBLOCKS    the GPUs' block-step choices each rank
--     (one rank or every rank)        reads (compared; a bad value refused)
--   arg[1] == "tune"                  rank 1 alone asks for tuning
local orrery = require "orrery"
local me = orrery.rank
local ok, msg = pcall(function()
  local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 64, seed = 3 },
    backend = arg[1] == "tune" and "cpu" or nil, dt = 1e-3,
    tune = arg[1] == "tune" and me == 1 or nil }
  sim:step(2)
end)
print(("%d: create: %s"):format(me, ok and "ok" or "error " .. tostring(msg)))
local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 64, seed = 3 },
  backend = "cpu", dt = 1e-3 }
sim:step(3)
print(("%d: done %.17g"):format(me, sim:energy().total))
