"""Fixtures of the breakerd Python tests: a private segment per test (named
/brkpy-<pid>-<n>, unlinked afterwards), the fake clock, and the built bctl."""

import itertools
import json
import os
import subprocess
import sys
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:  # helpers for multiprocessing children (_mp_worker)
    sys.path.insert(0, HERE)

import breakerd  # noqa: E402
from breakerd.testing import FakeClock  # noqa: E402

_counter = itertools.count()


def _settle_exiting_threads(bound=2.0):
    """Before any fork() of a test process (os.fork, multiprocessing's fork,
    Popen with preexec_fn): wait, at most ``bound`` s, until every OS thread
    of the process is a live Python thread, so no joined thread is still
    tearing down. GCC 12's ASan runtime takes no allocator lock across
    fork(): a thread exiting at the fork drains its allocator cache under
    the allocator's mutex, and the child then blocks forever at its first
    malloc (the ASan stage hung 1,800 s on it;
    test_fork.py::test_no_fork_of_the_test_process_meets_a_thread_still_exiting).
    Threads that are not Python's (none today) would show as a lasting
    excess: after one bound it is taken as the baseline."""
    end = time.monotonic() + bound
    while True:
        excess = len(os.listdir("/proc/self/task")) - threading.active_count()
        if excess <= _settle_exiting_threads.baseline:
            return
        if time.monotonic() > end:
            _settle_exiting_threads.baseline = excess
            return
        time.sleep(0.0005)


_settle_exiting_threads.baseline = 0
os.register_at_fork(before=_settle_exiting_threads)


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
