-- run: sim:run{steps= or until=, every=, on_step=, progress=, render_every=, render=,
-- checkpoint_every=, checkpoint=}, stepping a simulation
-- with an energy log on stdout (a header and one line every `every` steps)
-- and a progress bar with ETA on stderr, only when stderr is a terminal (and
-- $CI is unset): never in pipes or CI logs.
local core = require "orrery.core"
local agree_mod = require "orrery.agree"
local Sim = core.Sim
local clock, isatty, time_tolerance = core._clock, core._isatty, core._time_tolerance
-- over several ranks rank 0 alone prints, and every decision that changes
-- which collective calls follow (a progress update, a stop) is rank 0's
local rank0, many, agree = core.rank == 0, core.ranks > 1, core._agree
-- a live view (orrery.view): whether it watches a simulation, and whether paused
-- (both of _view_active's values: `a and f()` would keep only the first)
local function view_active(sim)
  if core._view_active then return core._view_active(sim) end
  return false, false
end
local format, floor, huge, sqrt = string.format, math.floor, math.huge, math.sqrt

-- the next chunk of steps, to last about secs, after k steps took dt: at
-- most twice the last one, and the same on every rank
local function next_chunk(k, dt, secs, last)
  local c = dt > 0 and math.max(1, math.min(floor(k * secs / dt), 2 * last)) or 2 * last
  if many then c = agree(c) end
  return c
end

local WHO = "sim:run"
local KEYS = { steps = true, ["until"] = true, every = true, on_step = true, progress = true,
  cluster = true, max_energy_error = true,
  checkpoint_every = true, checkpoint = true, render_every = true, render = true }

local words, describe = agree_mod.words, agree_mod.describe

-- Errors point at the caller of run: level 4 from here (bad < check_opts <
-- run < caller), level 3 from check_opts itself.
local function bad(fmt, ...) error(WHO .. ": " .. format(fmt, ...), 4) end

local function is_count(v, min)
  return math.type(v) == "integer" and v >= min
    or (math.type(v) == "float" and v == floor(v) and v >= min and v < 2^53)
end

local function check_opts(self, nargs, opts)
  local mt = getmetatable(self)
  if type(self) ~= "userdata" or type(mt) ~= "table" or mt.__name ~= "orrery.Sim" then
    error(format("bad argument #1 to 'run' (orrery.Sim expected, got %s)", describe(self)), 3)
  end
  if type(opts) ~= "table" then
    error(format("bad argument #1 to 'run' (table expected, got %s)",
      nargs == 0 and "no value" or describe(opts)), 3)
  end
  for k in pairs(opts) do
    if not KEYS[k] then
      if type(k) == "string" then bad("unknown key '%s'", k) end
      bad("unknown key [%s]", describe(k))
    end
  end
  local steps, upto = opts.steps, nil
  if opts["until"] ~= nil then
    -- steps of sim.dt up to the time, the last one shortened to land on it,
    -- as sim:advance takes them (between block steps: from the end of the
    -- interval under way); a time a rounding before the clock is the clock's
    local t, t0 = opts["until"], self._sync_time
    if steps ~= nil then bad("'steps' and 'until' exclude each other") end
    if type(t) ~= "number" or t ~= t or t == huge
        or (t < t0 and t0 - t > time_tolerance(self.dt, t0, t)) then
      bad("'until' must be a time from the %s %.17g on (got %s)", self.synchronized and "current"
        or "end of the interval of block steps under way,", t0, describe(t))
    end
    upto, steps = t, huge
  elseif not is_count(steps, 0) then
    bad("'steps' must be a non-negative integer (got %s)", describe(steps))
  end
  if opts.every ~= nil and not is_count(opts.every, 1) then
    bad("'every' must be a positive integer (got %s)", describe(opts.every))
  end
  if opts.on_step ~= nil and type(opts.on_step) ~= "function" then
    bad("'on_step' must be a function (got %s)", describe(opts.on_step))
  end
  if opts.progress ~= nil and type(opts.progress) ~= "boolean" then
    bad("'progress' must be true or false (got %s)", describe(opts.progress))
  end
  -- outputs on the way: a rolling checkpoint and frames (sim:checkpoint, sim:render)
  local out = {}
  if opts.checkpoint_every ~= nil then
    if not is_count(opts.checkpoint_every, 1) then
      bad("'checkpoint_every' must be a positive integer (got %s)", describe(opts.checkpoint_every))
    end
    out.ck_every, out.ck_path = floor(opts.checkpoint_every), opts.checkpoint or "checkpoint.hdf5"
  end
  if opts.checkpoint ~= nil and (type(opts.checkpoint) ~= "string" or not out.ck_every) then
    bad("'checkpoint' must be a file name, with 'checkpoint_every' (got %s)",
      describe(opts.checkpoint))
  end
  if opts.render_every ~= nil and not is_count(opts.render_every, 1) then
    bad("'render_every' must be a positive integer (got %s)", describe(opts.render_every))
  end
  if (opts.render_every == nil) ~= (opts.render == nil)
      or (opts.render ~= nil and type(opts.render) ~= "table" and type(opts.render) ~= "string") then
    bad("'render_every' and 'render' (sim:render's options or a path) go together (got %s, %s)",
      describe(opts.render_every), describe(opts.render))
  end
  out.r_every, out.render = opts.render_every and floor(opts.render_every), opts.render
  local me = opts.max_energy_error
  if me ~= nil and (type(me) ~= "number" or not (me > 0) or me == huge) then
    bad("'max_energy_error' must be a positive number (got %s)", describe(me))
  end
  out.max_dE = me
  -- cluster = true, or a list of mass fractions: the core radius, the
  -- half-mass radius and those Lagrangian radii on every log line
  if opts.cluster ~= nil then
    local c = opts.cluster
    local ok = c == true or (type(c) == "table" and #c >= 1)
    for _, f in ipairs(type(c) == "table" and c or {}) do
      ok = ok and type(f) == "number" and f > 0 and f <= 1
    end
    if not ok then
      bad("'cluster' must be true or a list of mass fractions in (0, 1] (got %s)", describe(c))
    end
    out.cluster = c == true and {} or c
  end
  return steps == huge and huge or floor(steps), opts.every and floor(opts.every), opts.on_step,
    opts.progress ~= false, out, upto
end

local HEADER = format("%10s %12s %17s %11s %11s %8s %10s",
  "step", "t", "E", "dE/E0", "|P|", "Q", "steps/s")
-- with block time steps: blocks since the last line, active bodies per
-- block, the smallest step in the last interval
local BLOCKS = format(" %9s %10s %11s", "blocks", "active/blk", "min dt")
-- with regularisation: the regularised groups (binaries) and the energy
-- bound in them (their binding energy summed), as a fraction of |E|
local GROUPS = format(" %8s %11s", "binaries", "E_bin/|E|")

-- "1:02:03" or "2:03"
local function hms(s)
  s = floor(s + 0.5)
  local h, m = floor(s / 3600), floor(s / 60) % 60
  if h > 0 then return format("%d:%02d:%02d", h, m, s % 60) end
  return format("%d:%02d", m, s % 60)
end

local function bar(done, total, elapsed)
  local width = 30
  local frac = total > 0 and done / total or 1
  local fill = floor(frac * width + 0.5)
  local eta = done > 0 and elapsed / done * (total - done) or nil
  io.stderr:write(format("\r[%s%s] %3d%% %d/%d steps  %s", string.rep("#", fill),
    string.rep(".", width - fill), floor(frac * 100), done, total,
    eta and ("ETA " .. hms(eta)) or "")
    .. "\27[K")
  io.stderr:flush()
end

local function clear_bar()
  io.stderr:write("\r\27[K")
  io.stderr:flush()
end

--- Steps the simulation `steps` times.  With every=K, prints a header and a
-- line at the start and every K steps (and after the last step): the step
-- count, t, total energy E, (E-E0)/|E0| against the start of this run, |P|,
-- the virial ratio (sim:virial_ratio()) and steps per second since the last
-- line.  on_step(sim, step) runs after every step (step = 1..steps of this
-- run); returning false stops the run.  render_every=K with render={...}
-- (sim:render's options) writes a frame whenever sim.steps is a multiple of
-- K (at the start too when sim.steps is 0), all on disk when run returns;
-- checkpoint_every=K writes
-- sim:checkpoint(checkpoint or "checkpoint.hdf5") whenever sim.steps is a
-- multiple of K, one rolling file (after on_step and the frame, so a resumed
-- run continues the series).  With block time steps the steps are intervals
-- of dt_max, and a run called between block steps (sim:step()) ends the
-- interval under way first.  until=T: whole steps up to T, then a shorter
-- last one landing on T (sim:advance), a step of the run like the others
-- (on_step, frames, checkpoints, the energy bound, the log).  Returns
-- {steps=, seconds=}.
function Sim:run(...)
  -- over several ranks every rank makes the same run (its options decide
  -- which collectives follow): the call is compared before its options are
  -- checked, as every collective method's (orrery.agree), which fails
  -- every rank alike
  if many and select("#", ...) >= 1 and type(self) == "userdata" then
    core._gate(self, "sim:run(" .. words((...), 0) .. ")")
  end
  local steps, every, on_step, progress, out, upto = check_opts(self, select("#", ...), ...)
  -- between block steps (sim:step() with hermite) the interval under way
  -- ends first, as the run's first step: its steps are whole intervals of dt_max
  local blocks = self.blocks
  local last_blocks = blocks
  local regular = blocks and self.regularize and true
  -- the steps left, for the progress bar (with until: as many as whole and
  -- shortened steps of dt reach it from here)
  local function total(done)
    if not upto then return steps end
    local left = (upto - self._sync_time) / self.dt
    return done + (self.synchronized and 0 or 1) + math.max(0, math.ceil(left - 1e-9))
  end
  local show_bar = progress and total(0) > 0 and isatty(2) and not os.getenv("CI")
  if many then show_bar = agree(show_bar and true or false) end
  -- an error or Ctrl-C on the way clears the bar (closed while the error
  -- unwinds, so before the message is printed): the message gets its own line
  local bar_shown = false
  local _ <close> = setmetatable({}, { __close = function()
    if bar_shown then clear_bar() end
  end })
  local t_start = clock()
  local E0, last_clock, last_done, logged = nil, t_start, 0, -1

  -- a run that stops (a blow-up, the energy bound) names the last good
  -- checkpoint it wrote, so nothing is lost
  local last_ck
  local function stopped(msg, level)
    if last_ck then
      msg = msg .. format("; the last good checkpoint is %s (step %d, t = %.9g)", out.ck_path,
        last_ck.steps, last_ck.time)
    end
    error(msg, level or 0)
  end
  local function energy_check(dE)
    if out.max_dE and math.abs(dE) > out.max_dE then   -- at the caller of run (level 4)
      stopped(format("%s: |dE/E0| = %.3g at step %d (t = %.9g) passed max_energy_error = %g",
        WHO, math.abs(dE), self.steps, self.time, out.max_dE), 4)
    end
  end

  local function logline(done)
    local p = self:momentum()   -- waits for the queued steps: time them first
    local now = clock()
    local e = self:energy()
    local E = e.total
    E0 = E0 or E
    local dE = E0 ~= 0 and (E - E0) / math.abs(E0) or E - E0
    local q = e.potential ~= 0 and self:virial_ratio() or 0 / 0
    local rate = "-"
    if done > last_done and now > last_clock then
      rate = format("%.4g", (done - last_done) / (now - last_clock))
    end
    if bar_shown then clear_bar() end
    local extra = ""
    if out.cluster then
      local fr = #out.cluster > 0 and out.cluster or nil
      local c = self:cluster(fr and { fractions = fr } or nil)
      extra = format(" %10.4g %10.4g", c.core_radius, c.r_half)
      for k = 1, #out.cluster do extra = extra .. format(" %9.4g", c.lagrangian[k]) end
    end
    if blocks then
      local b = self.blocks
      local nb = b.blocks - last_blocks.blocks
      extra = extra .. format(" %9d %10.1f %11.4g", nb, nb > 0 and (b.active - last_blocks.active) / nb or 0,
        b.smallest_dt)
      last_blocks = b
    end
    if regular then
      local bs = self:binaries()
      extra = extra .. format(" %8d %11.4g", bs.count, E ~= 0 and bs.energy / math.abs(E) or 0)
    end
    if rank0 then
      io.stdout:write(format("%10d %12.6g %17.10g %11.3e %11.3e %8.4f %10s%s\n", self.steps,
        self.time, E, dE, sqrt(p.x * p.x + p.y * p.y + p.z * p.z), q, rate, extra))
      io.stdout:flush()
    end
    last_clock, last_done, logged = clock(), done, done
  end
  if out.max_dE then E0 = self:energy().total end

  if every then
    if rank0 and many then   -- every rank's slice and kernels, once, as comment lines
      for _, r in ipairs(self.config.ranks) do
        io.stdout:write(format("# rank %d (%s, %s): bodies %d..%d, block %d unroll %d split %d "
          .. "ipt %d%s ranges %d threads %d (%s)\n", r.rank, r.host,
          r.device and "GPU " .. r.device or "cpu", r.first, r.first + r.count - 1, r.block,
          r.unroll, r.split, r.ipt, r.prefetch == 1 and " prefetch" or "", r.ranges, r.threads,
          r.source))
      end
    end
    local h = blocks and rank0 and self.config.hermite
    if h then   -- the force + jerk kernel's launch per bucket of active bodies, once
      local parts = {}
      for _, b in ipairs(h) do
        parts[#parts + 1] = format("<=%d tile %d %d/SM", b.active, b.tile, b.per_sm)
      end
      io.stdout:write(format("# force + jerk (%s): %s\n", h.source, table.concat(parts, ", ")))
    end
    local cols = ""
    if out.cluster then
      cols = format(" %10s %10s", "r_core", "r_half")
      for _, f in ipairs(out.cluster) do cols = cols .. format(" %9s", format("r_%g%%", 100 * f)) end
    end
    if rank0 then
      io.stdout:write(HEADER, cols, blocks and BLOCKS or "", regular and GROUPS or "", "\n")
    end
    logline(0)
  end
  -- frames at every multiple of render_every of sim.steps (0 included), a
  -- checkpoint at every multiple of checkpoint_every after a step
  if out.r_every and self.steps == 0 and total(0) > 0 then self:render(out.render) end
  local done, next_log, chunk = 0, every or huge, 1
  local bar_clock = clock()
  -- with a live view: chunks of about 50 ms (its poll runs after each),
  -- one step while paused
  local vchunk, rchunk = 1, 1
  while done < steps do
    -- with 'until': sim:advance's steps, in chunks (the last one shortened
    -- to land on it); the chunk sizes below never change them
    local k = upto and 1 << 30 or steps - done
    if every then k = math.min(k, next_log - done) end
    if out.r_every then k = math.min(k, out.r_every - self.steps % out.r_every) end
    if out.ck_every then k = math.min(k, out.ck_every - self.steps % out.ck_every) end
    if on_step then k = 1 end
    if show_bar then k = math.min(k, chunk) end
    -- the energy bound: checked after every chunk (every 10 steps without
    -- every=), before any frame or checkpoint of the steps is written
    if out.max_dE and not every then k = math.min(k, 10) end
    local viewed, paused = view_active(self)
    if viewed then k = math.min(k, paused and 1 or vchunk) end
    -- over several ranks a stop (Ctrl-C) is taken where the ranks agree, at
    -- a chunk's start: chunks of about 0.25 s
    if many then k = math.min(k, rchunk) end
    local t0 = clock()
    local ok, err
    if upto then
      ok, err = pcall(self._advance, self, upto, k)
      k = ok and err or 0
    else
      ok, err = pcall(self._steps, self, k)
    end
    if not ok then stopped(tostring(err)) end
    if k == 0 then break end   -- on 'until' (to the clock's resolution)
    done = done + k
    if viewed and not paused then vchunk = next_chunk(k, clock() - t0, 0.05, vchunk) end
    if many then rchunk = next_chunk(k, clock() - t0, 0.25, rchunk) end
    if out.max_dE then
      local E = self:energy().total
      energy_check(E0 ~= 0 and (E - E0) / math.abs(E0) or E - E0)
    end
    -- aim at about 5 progress updates a second (sync: GPU steps are queued)
    if show_bar then
      self:sync()
      local dt = clock() - t0
      chunk = dt > 0 and math.max(1, floor(k * 0.2 / dt)) or chunk * 2
      if many then chunk = agree(chunk) end
    end
    local stop = false
    if on_step and many then
      -- every rank's outcome compared (an error on one rank, or a stop
      -- there alone, would leave the others stepping): alike, each goes
      -- on or raises its own error; apart, every rank fails alike
      local ok, r = pcall(on_step, self, done)
      stop = ok and r == false
      -- through the same comparison as every collective call, so that a
      -- rank whose on_step failed between two of its collective calls
      -- meets the others' next call and not another kind of collective
      core._gate(self, format("on_step at step %d: %s", done,
        ok and (stop and "stopped" or "went on")
        or "raised an error: " .. (type(r) == "string" and r or "a " .. type(r) .. " value")))
      if not ok then error(r, 0) end
    elseif on_step then
      stop = on_step(self, done) == false
    end
    if out.r_every and self.steps % out.r_every == 0 then self:render(out.render) end
    if out.ck_every and self.steps % out.ck_every == 0 then
      self:checkpoint(out.ck_path)
      last_ck = { steps = self.steps, time = self.time }
    end
    if every and done == next_log then
      logline(done)
      next_log = next_log + every
    end
    if show_bar and rank0 and (clock() - bar_clock > 0.1 or done == total(done)) then
      bar(done, total(done), clock() - t_start)
      bar_shown, bar_clock = true, clock()
    end
    if stop then break end
  end
  if every and logged ~= done then logline(done) end
  if bar_shown then clear_bar() end
  bar_shown = false
  self:sync()
  self:flush{ finish = false }   -- the run's frames on disk (written in the background); movies stay open
  local seconds = clock() - t_start
  if core._verifying() then core._verify(self, "after sim:run") end
  return { steps = done, seconds = seconds }
end
