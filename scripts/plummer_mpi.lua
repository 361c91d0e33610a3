-- plummer_mpi.lua: meant to run under mpirun, one rank per GPU (or per CPU
-- socket): a Plummer sphere whose bodies are spread over the ranks.  Each
-- rank computes the forces on its slice from all bodies and the slices'
-- positions are exchanged after every drift; the bodies are bitwise those
-- of one rank.  Rank 0 writes the final snapshot.  The script prints as
-- if it ran alone: under mpirun only rank 0's output reaches the terminal
-- (run --all-ranks shows every rank's, each line behind "[rank R] ").
--   mpirun -np 2 build/orrery run scripts/plummer_mpi.lua [N] [STEPS] [OUT.hdf5]
--   mpirun -np 2 build/orrery run --all-ranks scripts/plummer_mpi.lua 4096 20
--   (as root add --allow-run-as-root; more ranks than cores: --oversubscribe)
local orrery = require "orrery"

local n = math.tointeger(tonumber(arg[1])) or 16384
local steps = math.tointeger(tonumber(arg[2])) or 200
local out = arg[3] or "plummer_mpi.hdf5"

local sim <close> = orrery.simulation{
  bodies = orrery.ic.plummer{ n = n, seed = 42 },
  softening = 0.01,
  dt = 1 / 512,
}
print(("Plummer sphere: %d bodies over %d rank%s, %s on %s"):format(sim.n, orrery.ranks,
  orrery.ranks == 1 and "" or "s", sim.precision, sim.backend))
local e0 = sim:energy().total
local run = sim:run{ steps = steps, every = math.max(1, steps // 10) }
local e = sim:energy().total   -- every rank takes part in the diagnostics
sim:write(out)                 -- written once, by rank 0, with every body
print(("|dE/E0| = %.2e after %d steps; %.3g interactions/s in all over %.2f s; wrote %s"):format(
  math.abs((e - e0) / e0), sim.steps, sim.n * sim.n * steps / run.seconds, run.seconds, out))
