-- agree: over several ranks, every collective method of orrery.Sim starts
-- by comparing its call over the ranks: the method and its arguments in
-- words, with the simulation's settings and the writes of its bodies since
-- the last comparison (orrery._gate, core/sim: orr_sim_agree_call).  A call
-- that differs on some rank (a bad argument there only, another method, a
-- param set there only) then fails every rank alike, naming the ranks,
-- where the ranks would have paired collectives of different calls (wrong
-- values, a hang).  The same arguments on every rank make the same errors
-- everywhere.  Also the words of values that sim:run's messages use.
local core = require "orrery.core"
local format = string.format
local M = {}

-- A value as error messages show it: strings quoted, numbers as written.
function M.describe(v)
  if type(v) == "string" then return format("%q", v) end
  if type(v) == "number" then return v ~= v and "nan" or tostring(v) end
  if type(v) == "boolean" then return tostring(v) end
  local mt = getmetatable(v)
  return type(mt) == "table" and type(mt.__name) == "string" and mt.__name or type(v)
end

-- A value in words, to compare over the ranks: keys in order, numbers to
-- the last bit, a table's entries (render's options, cluster's fractions)
-- likewise to depth 2, a function as "function".
function M.words(v, depth)
  if type(v) == "number" then   -- the shortest digits that read back as v
    if math.type(v) == "integer" or v ~= v then return M.describe(v) end
    for digits = 15, 16 do
      local w = format("%." .. digits .. "g", v)
      if tonumber(w) == v then return w end
    end
    return format("%.17g", v)
  end
  if type(v) ~= "table" or depth > 1 then
    local d = M.describe(v)
    -- bodies to load: their count (their values are rank 0's, as every write's)
    return d == "orrery.Bodies" and format("orrery.Bodies(n = %d)", #v) or d
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) ~= type(b) then return type(a) < type(b) end
    return (type(a) == "number" or type(a) == "string") and a < b
  end)
  local parts = {}
  for i, k in ipairs(keys) do
    parts[i] = (type(k) == "string" and k or "[" .. M.words(k, 2) .. "]") .. " = " .. M.words(v[k], depth + 1)
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

-- The methods whose work the ranks do together (each reads or moves the
-- bodies of every rank, or writes a file through rank 0; a write of a
-- body reads them first where they are not current); sim:run compares
-- its call itself (run.lua).  Writes through sim.pos and the other
-- buffers, and attribute writes, stay each rank's own: the next of these
-- calls compares them.
local COLLECTIVE = { "step", "advance", "sync", "body", "bodies", "set_body", "set_bodies",
  "load", "energy", "momentum", "angular_momentum", "center_of_mass", "virial_ratio",
  "cluster", "write", "checkpoint", "render", "flush", "tune", "set_param", "verify" }

-- Gates the methods (init.lua, once every method is defined): each C
-- method runs in its own frame after the comparison (its errors name it
-- as before).
function M.install()
  if core.ranks > 1 then core._gate_methods(core.Sim, COLLECTIVE, M.words) end
end

return M
