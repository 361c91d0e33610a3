"""pycheck: what the Python checks of orrery's files share (test_yt.py,
test_pynbody.py): counting checks in the format tests/test_lua.sh reads
("[       OK ] NAME: CHECK", "[  FAILED  ] ...", a closing "[ RESULT   ]
NAME: N passed, M failed, K skipped"), failing a block that logs or raises
a warning, relative closeness, and the physical units in cgs from their
definitions (IAU parsec; IAU nominal GM_sun over CODATA 2018 G), never from
the files under test."""
import contextlib
import logging
import math
import os
import subprocess
import sys
import tempfile
import traceback
import warnings

G_CGS = 6.67430e-8
PC_CM = 3.0856775814913673e18
MSUN_G = 1.3271244e26 / G_CGS
MYR_S = 3.15576e13


def derived(length_cm, mass_g):
    """The velocity (cm/s) and time (s) units that G = 1 gives."""
    v = math.sqrt(G_CGS * mass_g / length_cm)
    return v, length_cm / v


def run_script(orrery, script, prefix):
    """Runs the Lua script (text) with the orrery binary in a fresh
    temporary directory, which it returns with the script's standard
    output; a failing run ends the check program with orrery's output."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    with open(os.path.join(tmp, "write.lua"), "w") as f:
        f.write(script)
    run = subprocess.run([os.path.abspath(orrery), "run", "write.lua"], cwd=tmp,
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"orrery failed: {run.stdout}{run.stderr}")
    return tmp, run.stdout


class Checks:
    def __init__(self, name, total=None):
        self.name, self.total = name, total
        self.passed = self.failed = 0

    def check(self, what, fn):
        try:
            fn()
            self.passed += 1
            print(f"[       OK ] {self.name}: {what}", flush=True)
        except Exception:
            self.failed += 1
            detail = traceback.format_exc().strip().replace("\n", "\n    ")
            print(f"[  FAILED  ] {self.name}: {what}\n    {detail}", flush=True)

    def finish(self):
        """The closing line (checks not run count as skipped), and exit."""
        done = self.passed + self.failed
        skipped = self.total - done if self.total and self.total > done else 0
        print(f"[ RESULT   ] {self.name}: {self.passed} passed, {self.failed} failed, "
              f"{skipped} skipped", flush=True)
        sys.exit(0 if self.failed == 0 else 1)


class _Caught(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(record)


@contextlib.contextmanager
def no_warnings(logger_name):
    """Fails when the block logs a warning (or worse) to logger_name or
    raises a Python warning."""
    logger, caught = logging.getLogger(logger_name), _Caught()
    level = logger.level
    logger.addHandler(caught)
    logger.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            yield
    finally:
        logger.removeHandler(caught)
        logger.setLevel(level)
    said = [f"{r.levelname}: {r.getMessage()}" for r in caught.records]
    said += [f"{x.category.__name__}: {x.message}" for x in w]
    assert not said, said


def close(got, want, rtol, what):
    """Every element of got within a relative rtol of want."""
    import numpy as np
    got = np.asarray(got)
    err = float((abs(got - want) / abs(want)).max())
    assert err <= rtol, f"{what}: relative error {err:.3g} > {rtol:g}"
