-- write_fail: files rank 0 alone writes, failing there (a path under a
-- plain file), each inside pcall: every rank must get the same error and go
-- on in step with the others (the steps and the energy after it are
-- collective, so a rank left behind would hang or compute garbage).  Also
-- a checkpoint only rank 1 cannot read (a file another host does not see).
-- Prints "RANK: WHAT: ok|error MESSAGE" per case, then "RANK: done E".
-- With the argument "uncaught" the first failing checkpoint is not caught:
-- every rank ends with it, said once.
local orrery = require "orrery"
local me = orrery.rank
local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 64, seed = 5 },
  backend = "cpu", dt = 1e-3 }
if me == 0 then   -- a plain file where a directory should be
  local f = assert(io.open("blocker", "w")); f:write("x"); f:close()
end
sim:step(2)
if arg[1] == "uncaught" then sim:checkpoint("blocker/ck.hdf5") end
local function try(what, f, ...)
  local ok, msg = pcall(f, ...)
  print(("%d: %s: %s"):format(me, what, ok and "ok" or "error " .. tostring(msg)))
  sim:step(1)   -- collective: every rank must be here, in step
end
try("checkpoint", sim.checkpoint, sim, "blocker/ck.hdf5")
try("snapshot", sim.write, sim, "blocker/snap.hdf5")
try("text", sim.write, sim, "blocker/bodies.txt")
try("render", sim.render, sim, "blocker/frame.png")
try("flush", sim.flush, sim)   -- the frame's write failed in the background, on rank 0
try("good checkpoint", sim.checkpoint, sim, "good.hdf5")
try("restore", function()
  local r <close> = orrery.restore(me == 1 and "unseen.hdf5" or "good.hdf5")
end)
print(("%d: done %.17g"):format(me, sim:energy().total))
