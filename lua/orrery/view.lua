-- view: a live view of a simulation in a web browser: sim:view{...} and
-- `orrery run --view[=PORT]`.  The server (core/io/view.c, through
-- lua/lview.c) runs on threads of its own on rank 0; here is the poll that
-- runs on the simulation's thread between steps (lsim.c calls it after
-- sim:step, sim:advance and each of sim:run's chunks): a frame when a page
-- asks for one (a subsample of at most max_bodies bodies, gathered on the
-- GPU with CUDA), the page's controls (pause, resume, one step, a snapshot
-- or a PNG frame through sim:write and sim:render), and while a page is
-- open the energy error every energy_every seconds.  Over several ranks
-- rank 0 decides and every rank acts alike: one broadcast per poll, only
-- while a view is on.
local core = require "orrery.core"
local agree_mod = require "orrery.agree"
local Sim = core.Sim
local rank0, many, agree = core.rank == 0, core.ranks > 1, core._agree
local clock, format, floor, huge = core._clock, string.format, math.floor, math.huge
local describe = agree_mod.describe

local WHO = "sim:view"
local KEYS = { port = true, host = true, max_bodies = true, max_fps = true, max_clients = true,
  energy_every = true, dir = true, attribute = true }
local CMDS = { "pause", "resume", "step", "snapshot", "png" }
local CODE = {}
for k, c in ipairs(CMDS) do CODE[c] = k end
local HIST = 400   -- points of the energy error's history kept (thinned by half when full)

local server        -- the orrery.View (rank 0), one for the run, started by the first view
local server_opts   -- its host, max_fps and max_clients (every rank), which a later view keeps
local cur           -- the simulation viewed: { sim =, opts..., state }
local auto = core._view_port   -- `orrery run --view[=PORT]`: the port (0: a free one)
local announced                -- the URL printed

local function closed(sim)
  return not pcall(function() return sim.n end)
end

local function num(x)
  if x ~= x or x == huge or x == -huge then return "null" end
  return format("%.10g", x)
end

-- the status of a frame, as JSON
local function status(v, sim, first, stride, count)
  local hist = {}
  for k, h in ipairs(v.hist) do hist[k] = "[" .. num(h[1]) .. "," .. num(h[2]) .. "]" end
  local ranks = {}
  for k, r in ipairs(v.ranks) do ranks[k] = "[" .. r[1] .. "," .. r[2] .. "]" end
  local msg = v.msg and '"' .. v.msg:gsub('[%c"\\]', function(c)
    return format("\\u%04x", c:byte())
  end) .. '"' or "null"
  return format('{"t":%s,"step":%d,"sps":%s,"dE":%s,"n":%d,"count":%d,"first":%d,"stride":%d,'
    .. '"attr":"%s","paused":%s,"ranks":[%s],"hist":[%s],"msg":%s}', num(sim.time), sim.steps,
    num(v.sps or 0), v.dE and num(v.dE) or "null", sim.n, count, first, stride,
    v.attr_name or "mass", v.paused and "true" or "false", table.concat(ranks, ","), table.concat(hist, ","), msg)
end

local function frame(v, sim)
  if not sim.synchronized then return end   -- between block steps: at the interval's end
  local n = sim.n
  local stride = math.max(1, (n + v.max_bodies - 1) // v.max_bodies)
  local count = n > 0 and (n - 1) // stride + 1 or 0
  local now, steps = clock(), sim.steps
  if not v.paused and v.f_clock and now > v.f_clock and steps >= v.f_steps then
    v.sps = (steps - v.f_steps) / (now - v.f_clock)
  elseif v.paused then
    v.sps = 0
  end
  v.f_clock, v.f_steps = now, steps
  core._view_frame(server, sim, (status(v, sim, 0, stride, count)), 0, stride, count, v.attr)
end

local function energy(v, sim)
  if not sim.synchronized then return end
  local E = sim:energy().total
  v.E0 = v.E0 or E   -- the first: when the view began
  v.dE = v.E0 ~= 0 and (E - v.E0) / math.abs(v.E0) or E - v.E0
  v.e_clock = clock()
  local h = v.hist
  h[#h + 1] = { sim.time, v.dE }
  if #h >= HIST then   -- every other point: the history keeps its span
    local t = {}
    for k = 1, #h, 2 do t[#t + 1] = h[k] end
    v.hist = t
  end
end

-- the page's snapshot (sim:write) or PNG (core._view_png: written at once,
-- with a view of its own, so the script's frames keep their extent, colour
-- range and numbering); dir is a directory taken as it is ('%' in it is no
-- number), and a failure is said on the page and stderr, the run going on
local function write(v, sim, what)
  local path = format("%s/view_%d.%s", v.dir, sim.steps, what == "png" and "png" or "hdf5")
  local ok, err
  if what == "png" then
    ok, err = pcall(core._view_png, sim, path)
  else
    ok, err = pcall(sim.write, sim, (path:gsub("%%", "%%%%")))
  end
  v.msg = ok and (what == "png" and "PNG frame " or "snapshot ") .. path
    or ("writing " .. path .. " failed: " .. tostring(err):gsub("^[^\n]-:%d+: ", "", 1))
  if rank0 then io.stderr:write("orrery: view: ", v.msg, "\n") io.stderr:flush() end
end

-- rank 0's flags (1: a frame, 4: the energy; the command's code from bit 4),
-- broadcast to every rank
local function flags_of(v, f)
  local x = 0
  if rank0 then
    x = f & 1
    if f & 2 ~= 0 then
      local c = server:take()
      x = x | ((c and CODE[c] or 0) << 4)
    end
    if v.energy_every > 0 and (x & 1 ~= 0 or v.paused) and server:watched(3)
        and clock() - (v.e_clock or -huge) >= v.energy_every then
      x = x | 4
    end
  end
  if many then x = floor(agree(x)) end
  return x
end

local function handle(v, sim, x)
  local c = CMDS[x >> 4]
  if c == "pause" then
    v.paused = true
  elseif c == "resume" then
    v.paused, v.step_once = false, false
  elseif c == "step" then
    if v.paused then v.step_once = true end
  elseif c == "snapshot" or c == "png" then
    write(v, sim, c)
    x = x | 1   -- the message on the page soon
  end
  if x & 4 ~= 0 then energy(v, sim) end
  if x & 1 ~= 0 then frame(v, sim) end
end

-- what a view keeps while a later sim:view on the same simulation changes
-- its options: pause, the energy's reference and history, the last frame's
local KEEP = { "paused", "step_once", "E0", "dE", "hist", "e_clock", "msg", "f_clock", "f_steps",
  "sps" }

local function attach(sim, opts)
  local v = { sim = sim, max_bodies = opts.max_bodies or 100000,
    attr = opts.attribute and core._view_attr(sim, opts.attribute), attr_name = opts.attribute,
    energy_every = opts.energy_every or 2, dir = opts.dir or ".", hist = {}, ranks = {} }
  local again = cur and cur.sim == sim
  if again then
    for _, k in ipairs(KEEP) do v[k] = cur[k] end
  end
  for _, r in ipairs(sim.config.ranks or {}) do v.ranks[#v.ranks + 1] = { r.first, r.count } end
  if #v.ranks == 0 then v.ranks[1] = { 0, sim.n } end
  -- the server: once per run, on rank 0; a failure (the port in use) fails every rank
  local ok, err = true, nil
  if rank0 and not server then
    -- the port: sim:view's, else --view=PORT's (check() refused two apart)
    local port = opts.port ~= nil and opts.port ~= 0 and opts.port or auto or 0
    ok, err = pcall(core._view_start, { port = port, host = opts.host,
      max_fps = opts.max_fps, max_clients = opts.max_clients,
      who = opts.who or WHO })
    if ok then server = err; err = nil end
  end
  if many then ok = agree(ok) end
  if not ok then error(err or WHO .. ": the view did not start on rank 0", 0) end
  if not server_opts then   -- on every rank: what a later sim:view is compared with
    server_opts = { host = opts.host or "127.0.0.1", max_fps = opts.max_fps or 20,
      max_clients = opts.max_clients or 64 }
  end
  cur = v
  core._view_mark(sim, auto ~= nil)
  -- the energy error against the energy when the view began (collective;
  -- a later sim:view on the same simulation keeps it)
  if not again and v.energy_every > 0 and sim.synchronized then energy(v, sim) end
  if rank0 and not v.announced and not announced then   -- once a run
    announced = true
    local port = server:port()
    io.stderr:write(format("orrery: live view at %s\n", server:url()),
      format("orrery: through SSH: ssh -N -L %d:127.0.0.1:%d HOST, then open that URL here\n",
        port, port))
    io.stderr:flush()
  end
  return rank0 and server:url() or nil
end

-- a simulation that --view waits for, or the one viewed: attached
local function active(sim)
  if cur and cur.sim == sim then return cur end
  if auto and (not cur or closed(cur.sim)) then
    attach(sim, { port = auto, who = auto > 0 and "--view=" .. auto or "--view" })
    return cur
  end
  return nil
end

-- nil, or what is wrong with sim:view's options
local function check(opts)
  if type(opts) ~= "table" then return format("options must be a table (got %s)", describe(opts)) end
  for k in pairs(opts) do
    if not KEYS[k] then return format("unknown key '%s'", tostring(k)) end
  end
  for _, c in ipairs{ { "port", 0, 65535 }, { "max_bodies", 1, 100000000 },
      { "max_clients", 1, 1024 } } do
    local x = opts[c[1]]
    if x ~= nil and (math.type(x) ~= "integer" or x < c[2] or x > c[3]) then
      return format("'%s' must be an integer in %d..%d (got %s)", c[1], c[2], c[3], describe(x))
    end
  end
  local mf, ee = opts.max_fps, opts.energy_every
  if mf ~= nil and (type(mf) ~= "number" or not (mf > 0 and mf <= 1000)) then
    return format("'max_fps' must be a number in (0, 1000] (got %s)", describe(mf))
  end
  if ee ~= nil and (type(ee) ~= "number" or not (ee >= 0) or ee == huge) then
    return format("'energy_every' must be a number of seconds >= 0 (got %s)", describe(ee))
  end
  if opts.host ~= nil and type(opts.host) ~= "string" then
    return format("'host' must be an IPv4 address (got %s)", describe(opts.host))
  end
  if opts.dir ~= nil and type(opts.dir) ~= "string" then
    return format("'dir' must be a directory name (got %s)", describe(opts.dir))
  end
  if opts.attribute ~= nil and type(opts.attribute) ~= "string" then
    return format("'attribute' must be the name of one of the force law's attributes (got %s)",
      describe(opts.attribute))
  end
  if opts.dir == "" then
    return "'dir' must be a directory name (got \"\"; \".\" is the current directory)"
  end
  if auto and auto > 0 and opts.port and opts.port ~= 0 and opts.port ~= auto then
    return format("'port' = %d but `orrery run --view=%d` asks for port %d (give one of them)",
      opts.port, auto, auto)
  end
  if server and opts.port and opts.port ~= 0 and opts.port ~= server:port() then
    return format("the view already serves on port %d (one server a run)", server:port())
  end
  -- one server a run: a later sim:view cannot change it (on every rank)
  for _, k in ipairs(server_opts and { "host", "max_fps", "max_clients" } or {}) do
    if opts[k] ~= nil and opts[k] ~= server_opts[k] then
      return format("'%s' = %s differs from the view's server's (%s): one server a run, with "
        .. "the first sim:view's host, port, max_fps and max_clients", k, describe(opts[k]),
        describe(server_opts[k]))
    end
  end
end

--- sim:view{port=, host=, max_bodies=, max_fps=, max_clients=, energy_every=, dir=, attribute=}:
-- serves a live view of this simulation (LUA_API.md); returns its URL (on rank 0).
function Sim:view(...)
  if many and select("#", ...) >= 1 and type(self) == "userdata" then
    core._gate(self, "sim:view(" .. agree_mod.words((...), 0) .. ")")
  end
  local opts = ...
  if select("#", ...) == 0 then opts = {} end
  local msg = check(opts)
  if msg then error(WHO .. ": " .. msg, 2) end
  local _ = self.n   -- "simulation is closed"
  if opts.attribute then
    local a, list = core._view_attr(self, opts.attribute)
    if not a then
      error(format("%s: 'attribute': force law '%s' has no attribute '%s' (%s)", WHO, self.force,
        opts.attribute, list == "" and "it has none" or "it has " .. list), 2)
    end
  end
  return attach(self, opts)
end

-- sim:run asks: whether the simulation is viewed (its chunks are then
-- short), and whether it is paused (one step at a time)
function core._view_active(sim)
  local v = active(sim)
  return v ~= nil, v ~= nil and v.paused
end

core._view_set_poll(function(sim)
  local v = active(sim)
  if not v then return end
  local f = server and server:poll() or 0
  if f == 0 and not v.paused and not many then return end
  local x = flags_of(v, f)
  if x ~= 0 then handle(v, sim, x) end
  -- paused: frames and controls served here until resume or one step
  while v.paused and not v.step_once do
    f = server and server:wait(100) or 0
    x = flags_of(v, f)
    if x ~= 0 then handle(v, sim, x) end
  end
  v.step_once = false
end)

if auto then core._view_mark(nil, true) end

return {}
