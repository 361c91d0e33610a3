-- bitwise: the cases test_mpi.sh runs on 1, 2 and 3 ranks (CPU backend)
-- and compares bit for bit: float leapfrog, double yoshida4, double hermite
-- (block time steps), 40009 bodies in float and 20011 in double (GPU
-- only; 20011 with block time steps too), and a user law
-- with an attribute and a runtime param, each with N not divisible by 2 or
-- 3, and external fields with both, also in a frame that follows the
-- bodies.  Rank 0 writes the bodies of each case
-- to PREFIX<case>.txt (%.17g, so
-- every bit of the float and double state shows), and the frames of a run
-- to PREFIXframe_K.png.
-- BACKEND (cpu by default) may be cuda: the GPU tests run it there.
--   mpirun -np P orrery run tests/mpi/bitwise.lua PREFIX [BACKEND]
local orrery = require "orrery"
local prefix = assert(arg[1], "usage: bitwise.lua PREFIX [BACKEND]")
local backend = arg[2] or "cpu"

local function case(name, opts, steps, setup)
  opts.backend = backend
  if not opts.kernel then opts.tune = false end   -- one kernel configuration for every rank count
  local sim <close> = orrery.simulation(opts)
  if setup then setup(sim) end
  sim:run{ steps = steps, progress = false }   -- intervals of dt_max with block steps
  sim:write(prefix .. name .. ".txt")
end

case("float_leapfrog", { bodies = orrery.ic.plummer{ n = 101, seed = 11 }, dt = 1e-3 }, 20)
-- a configuration of one's own; on the GPU with 4 j-ranges, so that ranks
-- hold some wholly (their force starts while the other slices arrive)
case("ranges", { bodies = orrery.ic.plummer{ n = 1001, seed = 14 }, dt = 1e-3,
  kernel = backend == "cuda" and { block = 64, ranges = 4 } or { block = 256 } }, 10)
case("double_yoshida4", { bodies = orrery.ic.plummer{ n = 103, seed = 12 }, precision = "double",
  integrator = "yoshida4", dt = 1e-3 }, 10)
-- on the GPU, enough bodies for many blocks and the automatic j-ranges:
-- 10 steps in float and in double
if backend == "cuda" then
  case("float_large", { bodies = orrery.ic.plummer{ n = 40009, seed = 16 }, dt = 1e-3 }, 10)
  case("double_large", { bodies = orrery.ic.plummer{ n = 20011, seed = 17 }, precision = "double",
    dt = 1e-3 }, 10)
end

-- block time steps on the GPU: 20011 bodies, one interval (over ranks with a
-- GPU each the blocks stay on the GPUs, the larger ones shared out)
if backend == "cuda" then
  case("hermite_large", { bodies = orrery.ic.plummer{ n = 20011, seed = 19 },
    precision = "double", integrator = "hermite", dt_max = 1 / 16, eta = 0.02,
    softening = 1 / 256 }, 1)
end

-- block time steps: every rank keeps every body and corrects its slice's
-- active ones (a Plummer sphere with a spread of steps)
case("double_hermite", { bodies = orrery.ic.plummer{ n = 107, seed = 15 }, precision = "double",
  integrator = "hermite", dt_max = 1 / 16, eta = 0.02, softening = 0.01 }, 4)
-- regularised: unsoftened, a hard eccentric binary (bodies 3 and 9) among
-- 61 bodies; groups form, dissolve and are perturbed, every rank
-- integrating them alike
case("regularized_hermite", { bodies = orrery.ic.plummer{ n = 61, seed = 5 },
  precision = "double", integrator = "hermite", dt_max = 1 / 16, eta = 0.02, softening = 0,
  regularize = true }, 6, function(sim)
    local m, a, e = 1 / 61, 2e-4, 0.8
    local v = math.sqrt(2 * m * (1 - e) / (a * (1 + e)))
    sim:set_body(3, { x = a * (1 + e) / 2, y = 0, z = 0, vx = 0, vy = v / 2, vz = 0 })
    sim:set_body(9, { x = -a * (1 + e) / 2, y = 0, z = 0, vx = 0, vy = -v / 2, vz = 0 })
  end)
-- the same one block step at a time (sim:step()), to the same 4 intervals
do
  local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 107, seed = 15 },
    precision = "double", integrator = "hermite", dt_max = 1 / 16, eta = 0.02, softening = 0.01,
    backend = backend, tune = false }
  repeat sim:step() until sim.steps == 4
  sim:write(prefix .. "double_hermite_blocks.txt")
end

local screened = orrery.force{
  name = "screened", params = { lambda = 0.7, k = 1.0 }, runtime_params = { "k" },
  attributes = { "charge" }, scale = "k",
  pair = [[
    real inv = orr_rsqrt_nz(r2), r = r2 * inv, x = r / lambda;
    f = -(charge_i / mi) * charge_j * orr_exp(-x) * (1 + x) * (inv * inv * inv);
  ]],
}
case("user_law", { bodies = orrery.ic.uniform_cube{ n = 97, seed = 13, side = 4 }, force = screened,
  softening = 0.05, dt = 2e-3 }, 15, function(sim)
    for i = 1, sim.n do sim:set_attribute("charge", i, (i % 2 == 0 and 1 or -1) * (0.5 + i / 97)) end
    sim:set_param("k", 0.8)
  end)

-- external fields: each rank adds them to its own targets (milky_way and a
-- time-dependent field with a runtime param changed between steps), with
-- fixed steps and with block steps
local tide = orrery.field{ name = "tide", params = { k = 0.02 }, runtime_params = { "k" },
                           potential = "k*(x*x - z*z)*(1 + t)" }
for _, integ in ipairs{ "yoshida4", "hermite" } do
  local opts = { bodies = orrery.ic.plummer{ n = 109, seed = 18 }, precision = "double",
    integrator = integ, softening = 0.01, fields = { "milky_way", tide } }
  if integ == "hermite" then opts.dt_max, opts.eta = 1 / 16, 0.02 else opts.dt = 1e-3 end
  case("fields_" .. integ, opts, integ == "hermite" and 4 or 10, function(sim)
    sim:set_param("tide.k", 0.03)
  end)
end

-- a frame that follows the bodies through the fields (float: the fields in
-- double about the centre every rank integrates alike), fixed and block steps
for _, integ in ipairs{ "leapfrog", "hermite" } do
  local opts = { bodies = orrery.ic.plummer{ n = 107, seed = 19 }, precision = "float",
    integrator = integ, softening = 0.01, fields = { "milky_way", tide },
    frame = { center = { 8, 0, 0.1 }, velocity = { 0, 1.1, 0.05 } } }
  if integ == "hermite" then opts.dt_max, opts.eta = 1 / 16, 0.02 else opts.dt = 1e-3 end
  case("frame_" .. integ, opts, integ == "hermite" and 4 or 10, function(sim)
    sim:set_param("tide.k", 0.03)
  end)
end

-- frames along a run: rank 0 alone draws them from its own copy of every
-- position (no exchange: the other ranks only count them), the first
-- frame's view chosen from the bodies; the files are the same bytes on any
-- number of ranks.  The same frames go to a movie (rank 0 encodes it; a
-- second run appends, closing the simulation finishes it)
do
  local sim <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 211, seed = 15 },
    backend = backend, tune = false, dt = 1e-3 }
  local render = { path = prefix .. "frame_%d.png", movie = prefix .. "movie.mp4", width = 64,
    height = 48 }
  sim:run{ steps = 8, progress = false, render_every = 4, render = render }
  sim:run{ steps = 4, progress = false, render_every = 4, render = render }
end
