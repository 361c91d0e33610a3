-- mismatch_fields: rank 1 has another external field than rank 0; the
-- simulation must be refused on every rank, saying that the fields differ.
local orrery = require "orrery"
local sim <close> = orrery.simulation{ n = 37, backend = "cpu",
  fields = { orrery.rank == 1 and "plummer" or "hernquist" } }
