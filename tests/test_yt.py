#!/usr/bin/python3
"""test_yt: orrery's HDF5 snapshots as other tools see them.

orrery writes a snapshot (and, as the reference, the same state as text,
whose %.17g values are exact); h5py must find the GADGET-4 header and the
PartType1 datasets with exactly those values, and yt must open the file with
its gadget_hdf5 frontend and give the same particle count, positions,
velocities and masses (in code units), and the periodic box as the domain.
A run in physical units (units = {length = "pc", mass = "Msun"}) must come
out in yt in those units: positions in cm and pc, masses in g and Msun,
velocities in km/s and the time in s and Myr, with no warning logged.
yt's gadget_hdf5 frontend reads no units from a file (only its arepo
frontend does), so they go in as unit_base, from the file's Units group.

    /usr/bin/python3 tests/test_yt.py build/orrery

Prints one "[       OK ] test_yt: NAME" or "[  FAILED  ] ..." line per check
and a closing "[ RESULT   ] test_yt: N passed, M failed, 0 skipped" line
(the format tests/test_lua.sh counts); exits 1 when any check failed.
"""
import os
import shutil
import sys

from pycheck import MSUN_G, MYR_S, PC_CM, Checks, close, derived, no_warnings, run_script  # noqa: E402

CHECKS = Checks("test_yt")
check, finish = CHECKS.check, CHECKS.finish

SCRIPT = r"""
local orrery = require "orrery"
local open <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 300, seed = 12 },
  backend = "cpu", precision = "double", dt = 0.01 }
open:step(4)
open:write("open.hdf5"); open:write("open.txt")
local boxed <close> = orrery.simulation{ bodies = orrery.ic.uniform_cube{ n = 200, seed = 3 },
  backend = "cpu", box = { 4, 4, 4 } }
boxed:step(2)
boxed:write("box.hdf5"); boxed:write("box.txt")
local pc <close> = orrery.simulation{ bodies = orrery.ic.plummer{ n = 100, seed = 5 },
  backend = "cpu", precision = "double", dt = 0.01, units = { length = "pc", mass = "Msun" } }
pc:step(7)
pc:write("pc.hdf5"); pc:write("pc.csv")
print(("%.17g %.17g %.17g"):format(open.time, boxed.time, pc.time))
"""

# the units of the pc run in cgs, from their definitions (IAU parsec; IAU
# nominal GM_sun over CODATA 2018 G), not from the file
VEL_CM_S, TIME_S = derived(PC_CM, MSUN_G)


def main():
    if len(sys.argv) != 2:
        print("usage: test_yt.py path/to/orrery", file=sys.stderr)
        sys.exit(2)
    orr = os.path.abspath(sys.argv[1])
    try:
        import numpy as np
        import h5py
        import yt
    except ImportError as e:
        print(f"[  FAILED  ] test_yt: import: {e} (install python3-yt and python3-h5py: "
              "bash tools/deps.sh)")
        CHECKS.failed += 1
        finish()
    yt.set_log_level(40)
    tmp, out = run_script(orr, SCRIPT, "orrery-yt-")
    try:
        times = [float(x) for x in out.split()]

        def ref(name):
            # id x y z vx vy vz m, exact doubles
            return np.loadtxt(os.path.join(tmp, name), skiprows=1)

        def h5py_layout():
            r = ref("open.txt")
            with h5py.File(os.path.join(tmp, "open.hdf5"), "r") as f:
                h = f["Header"].attrs
                assert list(h["NumPart_ThisFile"]) == [0, 300, 0, 0, 0, 0]
                assert list(h["NumPart_Total"]) == [0, 300, 0, 0, 0, 0]
                assert list(h["NumPart_Total_HighWord"]) == [0] * 6
                assert list(h["MassTable"]) == [0.0] * 6
                assert h["Time"] == times[0]
                assert h["Redshift"] == 0 and h["BoxSize"] == 0
                assert h["NumFilesPerSnapshot"] == 1
                assert h["Omega0"] == 0 and h["OmegaLambda"] == 0 and h["HubbleParam"] == 1
                assert h["Flag_DoublePrecision"] == 1
                p = f["PartType1"]
                assert p["Coordinates"].shape == (300, 3)
                assert p["Coordinates"].dtype == np.float64
                assert (p["Coordinates"][:] == r[:, 1:4]).all()
                assert (p["Velocities"][:] == r[:, 4:7]).all()
                assert (p["Masses"][:] == r[:, 7]).all()
                assert p["ParticleIDs"].dtype == np.uint64
                assert (p["ParticleIDs"][:] == np.arange(1, 301)).all()
                u = f["Units"].attrs
                assert u["UnitLength_in_cm"] == 3.0856775814913673e21
                assert u["UnitSystem"] in (b"nbody", "nbody")

        check("h5py: header and datasets exact", h5py_layout)

        def yt_open():
            r = ref("open.txt")
            ds = yt.load(os.path.join(tmp, "open.hdf5"))
            assert type(ds).__name__ == "GadgetHDF5Dataset", type(ds).__name__
            assert ds.particle_type_counts["PartType1"] == 300, ds.particle_type_counts
            t = float(ds.current_time.to("code_time"))
            assert abs(t - times[0]) <= 1e-13 * max(1, times[0]), (t, times[0])
            ad = ds.all_data()
            # yt returns particles in its own order: match them by ParticleIDs
            ids = ad["PartType1", "ParticleIDs"].d.astype(np.int64)
            order = np.argsort(ids)
            assert (ids[order] == np.arange(1, 301)).all()
            x = ad["PartType1", "Coordinates"].to("code_length").d[order]
            v = ad["PartType1", "Velocities"].to("code_velocity").d[order]
            m = ad["PartType1", "Masses"].to("code_mass").d[order]
            assert np.allclose(x, r[:, 1:4], rtol=1e-13, atol=1e-13), abs(x - r[:, 1:4]).max()
            assert np.allclose(v, r[:, 4:7], rtol=1e-13, atol=1e-13), abs(v - r[:, 4:7]).max()
            assert np.allclose(m, r[:, 7], rtol=1e-13, atol=0), abs(m - r[:, 7]).max()
            assert abs(m.sum() - 1) < 1e-12, m.sum()

        check("yt: gadget_hdf5 count, positions, velocities, masses", yt_open)

        def yt_box():
            r = ref("box.txt")
            ds = yt.load(os.path.join(tmp, "box.hdf5"))
            assert (ds.domain_left_edge.to("code_length").d == 0).all()
            assert np.allclose(ds.domain_right_edge.to("code_length").d, 4, rtol=1e-14)
            ad = ds.all_data()
            ids = ad["PartType1", "ParticleIDs"].d.astype(np.int64)
            order = np.argsort(ids)
            x = ad["PartType1", "Coordinates"].to("code_length").d[order]
            assert x.shape == (200, 3)
            assert np.allclose(x, r[:, 1:4], rtol=1e-13, atol=1e-13)
            assert (x >= 0).all() and (x < 4).all()

        check("yt: periodic box as the domain", yt_box)

        def h5py_units():
            with h5py.File(os.path.join(tmp, "pc.hdf5"), "r") as f:
                h, u = f["Header"].attrs, f["Units"].attrs
                assert h["ComovingIntegrationOn"] == 0 and h["Redshift"] == 0
                assert h["Omega0"] == 0 and h["OmegaLambda"] == 0 and h["HubbleParam"] == 1
                assert h["Time"] == times[2]
                close(h["Time_GYR"], times[2] * TIME_S / (1000 * MYR_S), 1e-14, "Time_GYR")
                assert u["UnitSystem"] in (b"physical", "physical")
                for k, want in (("UnitLength_in_cm", PC_CM), ("UnitMass_in_g", MSUN_G),
                                ("UnitVelocity_in_cm_per_s", VEL_CM_S),
                                ("UnitTime_in_s", TIME_S)):
                    close(u[k], want, 1e-15, "Units/" + k)
                    if k != "UnitTime_in_s":
                        close(h[k], want, 1e-15, "Header/" + k)
                assert u["UnitLength_in_cm"] == PC_CM
                p = f["PartType1"]
                for name, cgs in (("Coordinates", PC_CM), ("Velocities", VEL_CM_S),
                                  ("Masses", MSUN_G)):
                    a = p[name].attrs
                    close(a["to_cgs"], cgs, 1e-15, name + " to_cgs")
                    assert a["a_scaling"] == 0 and a["h_scaling"] == 0, name
            # N-body units: the galactic reading, as before
            with h5py.File(os.path.join(tmp, "open.hdf5"), "r") as f:
                assert f["Header"].attrs["ComovingIntegrationOn"] == 0
                assert f["Units"].attrs["UnitSystem"] in (b"nbody", "nbody")

        check("h5py: physical units in Header, Units and the datasets", h5py_units)

        def yt_units():
            # the units' comment line, the column names, the bodies
            r = np.loadtxt(os.path.join(tmp, "pc.csv"), delimiter=",", skiprows=2)
            with open(os.path.join(tmp, "pc.csv")) as f:
                assert f.readline().startswith("# units: length 1 pc = 3.08567758149136")
            path = os.path.join(tmp, "pc.hdf5")
            with h5py.File(path, "r") as f:
                base = {k: float(f["Units"].attrs[k]) for k in
                        ("UnitLength_in_cm", "UnitMass_in_g", "UnitVelocity_in_cm_per_s")}
            with no_warnings("yt"):
                ds = yt.load(path, unit_base=base)
                assert type(ds).__name__ == "GadgetHDF5Dataset", type(ds).__name__
                assert ds.cosmological_simulation == 0
                ad = ds.all_data()
                ids = ad["PartType1", "ParticleIDs"].d.astype(np.int64)
                order = np.argsort(ids)
                x = ad["PartType1", "Coordinates"]
                v = ad["PartType1", "Velocities"]
                m = ad["PartType1", "Masses"]
                t = ds.current_time
                close(x.to("cm").d[order], r[:, 1:4] * PC_CM, 1e-12, "positions in cm")
                # yt's parsec (Debian's unyt 2.9.3) is 1.7e-10 shorter than the IAU one
                close(x.to("pc").d[order], r[:, 1:4], 1e-9, "positions in pc")
                close(v.to("km/s").d[order], r[:, 4:7] * VEL_CM_S / 1e5, 1e-12,
                      "velocities in km/s")
                close(m.to("g").d[order], r[:, 7] * MSUN_G, 1e-12, "masses in g")
                # unyt's solar mass (1.98841586e33 g) is 3e-6 above IAU GM_sun / G
                close(m.to("Msun").d[order], r[:, 7], 1e-5, "masses in Msun")
                close(np.array(t.to("s").d), times[2] * TIME_S, 1e-12, "time in s")
                close(np.array(t.to("Myr").d), times[2] * TIME_S / MYR_S, 1e-12, "time in Myr")
                close(np.array(ds.time_unit.to("Myr").d), 14.909601425915538, 1e-12,
                      "time unit in Myr")

        check("yt: units pc and Msun: positions, velocities, masses, time, no warnings",
              yt_units)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
