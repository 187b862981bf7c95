"""Registers mutation_check.sh: passes only when every mutant of the
requests adapter (429 detection removed, connect failures not counted) is
caught by the integration tests, after an unmutated copy passed them."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyint_fixtures  # noqa: E402,F401  (SIGTERM -> cleanup)


import os
import subprocess
import sys

import fleetlib as F


def test_mutants_of_the_adapter_are_caught(capsys):
    script = os.path.join(F.HERE, "mutation_check.sh")
    p = subprocess.run(["bash", script, sys.executable], env=F.child_env(),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=240)
    out = p.stdout.decode()
    with capsys.disabled():
        print("\n" + out)
    assert p.returncode == 0, out
    assert "CAUGHT - 429-detection" in out and "CAUGHT - connect-lost" in out and "CAUGHT - celery-429" in out, out
    assert "mutants: 3 caught, 0 missed, 0 broken" in out, out
