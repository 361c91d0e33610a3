"""test_galpy: orrery's built-in field milky_way against galpy's
MWPotential2014 (Bovy 2015), an independent code: the potential at a few
points, and orbits integrated for 1 Gyr by both (galpy's DOP853 at rtol
1e-13, orrery's yoshida4 in double at a step of 1e-4 of the time unit, 1e-5
for an orbit inside the bulge),
in physical units (kpc, Msun, km/s; galpy's ro = 8 kpc, vo = 220 km/s).
Checked: the energy per unit mass at the start within 1e-12 of galpy's
(the same potential, zero point included), the final positions within
1e-6 relative of galpy's, and orrery's energy conserved to 1e-10.  galpy
comes from PyPI (tools/deps.sh puts it in .venv-galpy); without it the
checks are skipped, and so counted.  The same for a frame's centre
(frame = {center =, velocity =}): the frame's own orbit integration against
galpy's, on two of the orbits.
    python tests/test_galpy.py BUILD/orrery"""
import math
import os

import numpy
import subprocess
import sys

try:
    from galpy.orbit import Orbit
    from galpy.potential import MWPotential2014, evaluatePotentials
except ImportError as e:  # counted as skipped, with why
    print(f"[  SKIPPED ] test_galpy: galpy is not installed ({e})")
    print("[ RESULT   ] test_galpy: 0 passed, 0 failed, 9 skipped")
    sys.exit(0)

ORRERY = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
G_CGS, KPC_CM, MSUN_G = 6.67430e-8, 3.0856775814913673e21, 1.3271244e26 / 6.67430e-8
G = G_CGS * MSUN_G / (KPC_CM * 1e10)   # velocity unit 1 km/s for kpc and Msun
RO, VO = 8.0, 220.0
GYR = 3.15576e16 / (KPC_CM / 1e5)      # 1 Gyr in kpc / (km/s)
passed = failed = 0


def report(ok, what):
    global passed, failed
    print(f"[{'       OK ' if ok else '  FAILED  '}] test_galpy: {what}")
    passed, failed = passed + ok, failed + (not ok)


def orrery_orbit(state, t_end, dt, integrator="yoshida4", frame=False):
    r = subprocess.run([ORRERY, "run", os.path.join(HERE, "galpy", "orbit.lua"), repr(G),
                        repr(t_end), repr(dt), integrator] + [repr(v) for v in state] +
                       (["frame"] if frame else []),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"orrery exit {r.returncode}: {r.stdout}{r.stderr}")
    out = {}
    for line in r.stdout.splitlines():
        w = line.split()
        out[w[0]] = [float(v) for v in w[1:] if v not in ("ro", "vo")]
    return out


def galpy_orbit(state, t_end):
    """state in kpc and km/s (Cartesian); galpy's Orbit in natural units."""
    x, y, z, vx, vy, vz = state
    R, phi = math.hypot(x, y), math.atan2(y, x)
    vR = (x * vx + y * vy) / R
    vT = (x * vy - y * vx) / R
    o = Orbit([R / RO, vR / VO, vT / VO, z / RO, vz / VO, phi])
    tn = t_end * (KPC_CM / 1e5) / (RO * KPC_CM / (VO * 1e5))   # in ro / vo
    o.integrate(numpy.array([0.0, tn]), MWPotential2014, method="dop853_c", rtol=1e-13, atol=1e-15,
                progressbar=False)
    R1, z1, phi1 = o.R(tn, use_physical=False) * RO, o.z(tn, use_physical=False) * RO, \
        o.phi(tn, use_physical=False)
    E0 = (o.E(0.0, pot=MWPotential2014, use_physical=False)) * VO ** 2
    return (R1 * math.cos(phi1), R1 * math.sin(phi1), z1), E0


orbits = {   # the state, and orrery's step (about 1/2000 of a radial period)
    # near the Sun, off the plane: disc and halo
    "a disc orbit from (8, 0, 0.1) kpc": ((8.0, 0.0, 0.1, 10.0, 235.0, 15.0), 1e-4),
    # inside the bulge's cut-off and the halo's series (r/a < 0.05)
    "an inner orbit from (0.6, 0.2, 0.3) kpc": ((0.6, 0.2, 0.3, -40.0, 150.0, 30.0), 1e-5),
    # eccentric, out to the halo
    "an eccentric halo orbit from (15, 5, 8) kpc": ((15.0, 5.0, 8.0, -80.0, 60.0, 110.0), 1e-4),
}
t_end = 1.0 * GYR
for name, (state, dt) in orbits.items():
    got = orrery_orbit(state, t_end, dt)
    ref, E0 = galpy_orbit(state, t_end)
    e_start, e_end = got["start"][6], got["end"][6]
    pos = got["end"][0:3]
    dpos = math.sqrt(sum((a - b) ** 2 for a, b in zip(pos, ref))) / math.sqrt(sum(b * b for b in ref))
    dE0 = abs(e_start - E0) / abs(E0)
    drift = abs(e_end - e_start) / abs(e_start)
    print(f"  {name}: galpy {ref}, orrery {pos}: {dpos:.2e} relative; E0 {e_start:.15g} "
          f"vs galpy {E0:.15g} ({dE0:.1e}); energy drift {drift:.1e}")
    report(dpos < 1e-6 and drift < 1e-10,
           f"{name}: after 1 Gyr within 1e-6 of galpy ({dpos:.2e}), energy conserved to 1e-10 "
           f"({drift:.1e})")
    report(dE0 < 1e-12, f"{name}: the energy at the start within 1e-12 of galpy's ({dE0:.1e})")
# a frame's centre (frame = {center =, velocity =}): its own orbit integration
for name in ("a disc orbit from (8, 0, 0.1) kpc", "an eccentric halo orbit from (15, 5, 8) kpc"):
    state = orbits[name][0]
    got = orrery_orbit(state, t_end, 1e-2, frame=True)
    ref, E0 = galpy_orbit(state, t_end)
    pos = got["end"][0:3]
    dpos = math.sqrt(sum((a - b) ** 2 for a, b in zip(pos, ref))) / math.sqrt(sum(b * b for b in ref))
    drift = abs(got["end"][6] - got["start"][6]) / abs(got["start"][6])
    dE0 = abs(got["start"][6] - E0) / abs(E0)
    print(f"  frame centre on {name}: galpy {ref}, orrery {pos}: {dpos:.2e} relative; energy "
          f"drift {drift:.1e}, E0 {dE0:.1e} from galpy's")
    report(dpos < 1e-6 and drift < 1e-10 and dE0 < 1e-12,
           f"a frame's centre on {name}: after 1 Gyr within 1e-6 of galpy ({dpos:.2e}), the "
           f"galaxy's energy conserved to 1e-10 ({drift:.1e}), at the start within 1e-12 of "
           f"galpy's ({dE0:.1e})")
# the potential itself, at points over the bulge, disc and halo (natural units in galpy)
worst = 0.0
for R, z in ((0.05, 0.0), (0.3, 0.1), (1.0, 0.0), (2.0, 1.5), (12.0, 40.0)):
    ref = evaluatePotentials(MWPotential2014, R / RO, z / RO) * VO ** 2
    got = orrery_orbit((R, 0.0, z, 0.0, 0.0, 0.0), 0.0, 1e-4)["start"][7]
    worst = max(worst, abs(got - ref) / abs(ref))
report(worst < 1e-12, f"the potential at 5 points from 50 pc to 42 kpc within 1e-12 of galpy's "
       f"({worst:.1e})")
print(f"[ RESULT   ] test_galpy: {passed} passed, {failed} failed, 0 skipped")
