-- test_view: sim:view{} from a script: the URL it returns (127.0.0.1, the
-- port asked or a free one, a 32-hex-digit token), one server a run (a
-- later sim:view moves it to another simulation on the same port; another
-- port is refused), the messages for bad options with the script's line,
-- and that steps, sim:run (chunked) and sim:advance give the same bodies
-- with a view as without (the view only reads).  The page and its controls
-- in a browser are tests/test_view.sh's.  CPU backend, small N.
local T = dofile(arg[0]:match("^(.*/)") .. "testlib.lua")
local orrery = require "orrery"

local function cpu(n, seed)
  return orrery.simulation{ bodies = orrery.ic.plummer{ n = n, seed = seed }, dt = 1 / 256,
    softening = 0.02, backend = "cpu", precision = "double" }
end

local url, port
T.test("sim:view returns its URL", function()
  local sim <close> = cpu(64, 1)
  url = sim:view{ max_bodies = 10 }
  port = tonumber(url:match("^http://127%.0%.0%.1:(%d+)/%?token=%x+$"))
  T.ok(port and port > 0, "url " .. tostring(url))
  T.eq(#url:match("token=(%x+)$"), 32)
end)

T.test("one server a run: a later view moves to the other simulation", function()
  local sim <close> = cpu(32, 2)
  T.eq(sim:view{}, url)
  T.eq(sim:view{ port = port }, url)
  T.raises(("sim:view: the view already serves on port %d (one server a run)"):format(port),
    sim.view, sim, { port = port == 65535 and 65534 or port + 1 })
end)

T.test("one server a run: its host, max_fps and max_clients stay the first view's", function()
  local sim <close> = cpu(16, 4)
  T.raises("sim:view: 'host' = \"0.0.0.0\" differs from the view's server's (\"127.0.0.1\"): one "
    .. "server a run, with the first sim:view's host, port, max_fps and max_clients", sim.view, sim,
    { host = "0.0.0.0" })
  local tail = ": one server a run, with the first sim:view's host, port, max_fps and max_clients"
  T.raises("sim:view: 'host' = \"garbage\" differs from the view's server's (\"127.0.0.1\")" .. tail,
    sim.view, sim, { host = "garbage" })
  T.raises("sim:view: 'max_fps' = 1 differs from the view's server's (20)" .. tail, sim.view, sim,
    { max_fps = 1 })
  T.raises("sim:view: 'max_clients' = 1 differs from the view's server's (64)" .. tail, sim.view,
    sim, { max_clients = 1 })
  -- the same values are no change
  T.eq(sim:view{ host = "127.0.0.1", max_fps = 20, max_clients = 64, max_bodies = 5 }, url)
end)

T.test("bad options name the option", function()
  local sim <close> = cpu(8, 3)
  T.raises("sim:view: options must be a table (got 5)", sim.view, sim, 5)
  T.raises("sim:view: unknown key 'colour'", sim.view, sim, { colour = "red" })
  T.raises("sim:view: 'port' must be an integer in 0..65535 (got 70000)", sim.view, sim,
    { port = 70000 })
  T.raises("sim:view: 'port' must be an integer in 0..65535 (got 80.5)", sim.view, sim,
    { port = 80.5 })
  T.raises("sim:view: 'max_bodies' must be an integer in 1..100000000 (got 0)", sim.view, sim,
    { max_bodies = 0 })
  T.raises("sim:view: 'max_fps' must be a number in (0, 1000] (got 0)", sim.view, sim,
    { max_fps = 0 })
  T.raises("sim:view: 'energy_every' must be a number of seconds >= 0 (got -1)", sim.view, sim,
    { energy_every = -1 })
  T.raises("sim:view: 'host' must be an IPv4 address (got 1)", sim.view, sim, { host = 1 })
  T.raises("sim:view: 'dir' must be a directory name (got true)", sim.view, sim, { dir = true })
  T.raises("sim:view: 'dir' must be a directory name (got \"\"; \".\" is the current directory)",
    sim.view, sim, { dir = "" })
  T.raises("sim:view: 'attribute': force law 'gravity' has no attribute 'q' (it has none)",
    sim.view, sim, { attribute = "q" })
  T.raises("sim:view: 'attribute' must be the name of one of the force law's attributes (got 1)",
    sim.view, sim, { attribute = 1 })
  -- the script's line
  local ok, err = pcall(function() sim:view{ port = -1 } end)
  T.ok(not ok and err:find("^[^:]*test_view%.lua:%d+: sim:view: 'port'"), err)
  sim:close()
  T.raises("orrery.Sim: simulation is closed", sim.view, sim, {})
end)

T.test("a view changes no bit of a run", function()
  local a <close> = cpu(300, 7)
  local b <close> = cpu(300, 7)
  b:view{ max_bodies = 50 }
  a:run{ steps = 40 }
  b:run{ steps = 40 }
  a:step(3)
  b:step(3)
  a:advance(a.time + 0.05)
  b:advance(b.time + 0.05)
  T.same_bodies(a, b, "with and without a view")
  T.eq(b.steps, a.steps)
end)

T.done()
