"""test_pynbody: orrery's HDF5 snapshots as pynbody sees them.

A run in physical units (units = {length = "pc", mass = "Msun"}) must load
in pynbody's GadgetHDF5 reader with its time in the right unit (not an age
from a cosmology), positions in pc, masses in Msun, velocities in km/s, no
factor of a or h (not comoving), and no warning, either through Python's
warnings or pynbody's logger.  A run in N-body units loads the same way in
the galactic reading the file states (1 kpc, 1e10 Msun).  The expected
values come from the same state written as text (%.17g, exact) and the units'
definitions.  pynbody comes from PyPI (tools/deps.sh puts it in
.venv-pynbody); without it the tests are skipped, and so counted.

    .venv-pynbody/bin/python tests/test_pynbody.py build/orrery

Prints one "[       OK ] test_pynbody: NAME" or "[  FAILED  ] ..." line per
check and a closing "[ RESULT   ] test_pynbody: N passed, M failed, K
skipped" line (the format tests/test_lua.sh counts); exits 1 when any check
failed.
"""
import os
import shutil
import sys

CHECKS = 2
try:
    import numpy as np
    import pynbody
except ImportError as e:  # counted as skipped, with why
    print(f"[  SKIPPED ] test_pynbody: pynbody is not installed ({e}; bash tools/deps.sh "
          "puts it in .venv-pynbody)")
    print(f"[ RESULT   ] test_pynbody: 0 passed, 0 failed, {CHECKS} skipped")
    sys.exit(0)

from pycheck import MSUN_G, MYR_S, PC_CM, Checks, close, derived, no_warnings, run_script  # noqa: E402

RESULTS = Checks("test_pynbody", total=CHECKS)
check = RESULTS.check

SCRIPT = r"""
local orrery = require "orrery"
local pc <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 100, seed = 5 },
  backend = "cpu", precision = "double", dt = 0.01, units = { length = "pc", mass = "Msun" } }
pc:step(7)
pc:write("pc.hdf5"); pc:write("pc.txt")
local nb <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 80, seed = 6 },
  backend = "cpu", precision = "double", dt = 0.01 }
nb:step(5)
nb:write("nb.hdf5"); nb:write("nb.txt")
print(("%.17g %.17g"):format(pc.time, nb.time))
"""

def load(path, ref):
    """The snapshot, and the reference rows in its order (by ParticleIDs)."""
    f = pynbody.load(path)
    assert type(f).__name__ == "GadgetHDFSnap", type(f).__name__
    assert len(f) == len(ref), (len(f), len(ref))
    iord = np.asarray(f["iord"]).astype(np.int64)
    return f, ref[iord - 1]


def main():
    if len(sys.argv) != 2:
        print("usage: test_pynbody.py path/to/orrery", file=sys.stderr)
        sys.exit(2)
    orr = os.path.abspath(sys.argv[1])
    tmp, out = run_script(orr, SCRIPT, "orrery-pynbody-")
    try:
        times = [float(x) for x in out.split()]

        def ref(name):
            # id x y z vx vy vz m, exact doubles (after the units' comment line)
            with open(os.path.join(tmp, name)) as fh:
                rows = [line for line in fh if not line.startswith("#")]
            assert rows[0].split() == ["id", "x", "y", "z", "vx", "vy", "vz", "m"], rows[0]
            return np.loadtxt(rows[1:], ndmin=2)

        def physical():
            r = ref("pc.txt")
            vel, time = derived(PC_CM, MSUN_G)
            with no_warnings("pynbody"):
                f, r = load(os.path.join(tmp, "pc.hdf5"), r)
                t = f.properties["time"]
                close(t.in_units("s"), times[0] * time, 1e-12, "time in s")
                close(t.in_units("Myr"), times[0] * time / MYR_S, 1e-12, "time in Myr")
                pos, v, m = f["pos"], f["vel"], f["mass"]
                for arr in (pos, v, m):   # physical: no scale factor, no h
                    assert "a" not in str(arr.units) and "h" not in str(arr.units), arr.units
                close(pos.in_units("cm"), r[:, 1:4] * PC_CM, 1e-12, "positions in cm")
                close(pos.in_units("pc"), r[:, 1:4], 1e-12, "positions in pc")
                close(v.in_units("km s**-1"), r[:, 4:7] * vel / 1e5, 1e-12, "velocities in km/s")
                close(m.in_units("g"), r[:, 7] * MSUN_G, 1e-12, "masses in g")
                # pynbody's Msol (1.98842e33 g) is 5e-6 above IAU GM_sun / G
                close(m.in_units("Msol"), r[:, 7], 1e-5, "masses in Msun")
                assert f.properties["ComovingIntegrationOn"] == 0

        check("units pc and Msun: time, positions, velocities, masses, no warnings", physical)

        def nbody():
            r = ref("nb.txt")
            length, mass = 1e3 * PC_CM, 1e10 * MSUN_G
            vel, time = derived(length, mass)
            with no_warnings("pynbody"):
                f, r = load(os.path.join(tmp, "nb.hdf5"), r)
                close(f.properties["time"].in_units("s"), times[1] * time, 1e-12, "time in s")
                close(f["pos"].in_units("kpc"), r[:, 1:4], 1e-12, "positions in kpc")
                close(f["vel"].in_units("cm s**-1"), r[:, 4:7] * vel, 1e-12, "velocities")
                close(f["mass"].in_units("g"), r[:, 7] * mass, 1e-12, "masses in g")

        check("N-body units: read as 1 kpc and 1e10 Msun, no warnings", nbody)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    RESULTS.finish()


if __name__ == "__main__":
    main()
