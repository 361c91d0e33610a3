-- gc_order: simulations dropped without <close> and collected at
-- different moments on each rank (rank 0 collects one while rank 1 goes
-- on stepping another).  Tearing down an exchange is collective (NCCL's
-- communicator; on the CPU the test hook ORRERY_TEST_COLLECTIVE_TEARDOWN
-- stands in for it), so it must wait for a point every rank reaches in
-- the same order: the next creation, or the end of the run.  Prints
-- "RANK: done E".  arg[1]: the backend (cpu by default).
local orrery = require "orrery"
local me = orrery.rank
local function make(seed)
  return orrery.simulation{ bodies = orrery.ic.plummer{ n = 48, seed = seed },
    backend = arg[1] or "cpu", dt = 1e-3 }
end
local a, b = make(1), make(2)
a:step(1)
b:step(1)
if me == 0 then   -- rank 0 lets a go now
  a = nil
  collectgarbage()
  collectgarbage()
end
b:step(2)         -- every rank: rank 0 must not be tearing a down meanwhile
a = nil
local c = make(3)
if me == 1 then
  collectgarbage()
  collectgarbage()
end
b = nil
c:step(2)
print(("%d: done %.17g"):format(me, c:energy().total))
-- the rest at the end of the script, whenever each rank collects it
