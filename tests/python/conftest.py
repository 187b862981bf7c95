"""Fixtures of the breakerd Python tests: a private segment per test (named
/brkpy-<pid>-<n>, unlinked afterwards), the fake clock, and the built bctl."""

import itertools
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:  # helpers for multiprocessing children (_mp_worker)
    sys.path.insert(0, HERE)

import breakerd  # noqa: E402
from breakerd.testing import FakeClock  # noqa: E402

_counter = itertools.count()


def unique_shm():
    return f"/brkpy-{os.getpid()}-{next(_counter)}"


def unlink(shm):
    try:
        os.unlink("/dev/shm" + shm)
    except FileNotFoundError:
        pass


@pytest.fixture
def shm():
    name = unique_shm()
    yield name
    unlink(name)


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def seg(shm, clock):
    s = breakerd.attach(shm, clock=clock)
    yield s
    s.close()


@pytest.fixture
def realseg(shm):
    """A segment on the real monotonic clock (for other processes)."""
    s = breakerd.attach(shm)
    yield s
    s.close()


class Bctl:
    def __init__(self, path, shm):
        self.path = path
        self.shm = shm

    def run(self, *args, check=True):
        p = subprocess.run([self.path, "--shm", self.shm, *args], capture_output=True,
                           text=True, timeout=60)
        if check and p.returncode != 0:
            raise AssertionError(f"bctl {' '.join(args)} exited {p.returncode}: "
                                 f"{p.stdout}{p.stderr}")
        return p

    def json(self, *args):
        return json.loads(self.run(*args, "--json").stdout)


@pytest.fixture
def bctl(shm):
    path = os.environ.get("BRKPY_BCTL")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("BRKPY_BCTL must name the built bctl (run through meson test)")
    return Bctl(path, shm)


def fail_times(br, n, exc=ConnectionError):
    for _ in range(n):
        try:
            with br:
                raise exc("down")
        except exc:
            pass
