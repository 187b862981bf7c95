"""Fixtures of the integration and fleet tests (imported by the test
modules, not a conftest.py, so that no second module named ``conftest``
shadows tests/python/conftest.py): a private segment per test and the
controllable loopback upstream of upstream.py. Importing it also makes a
SIGTERM (meson's timeout) raise KeyboardInterrupt, so that every test's
finally block stops the processes it started (children also get
PDEATHSIG, see fleetlib)."""

import itertools
import os
import signal

import pytest

import upstream as _upstream


def _sigterm(signum, frame):
    raise KeyboardInterrupt("SIGTERM")


signal.signal(signal.SIGTERM, _sigterm)
# ... in the test process only: a child forked from it (a multiprocessing
# Pool's worker, os.fork) gets SIGTERM's default action back. Inherited,
# the handler turned Pool.terminate()'s SIGTERM into a KeyboardInterrupt
# in the worker, whose cleanup could block on a lock forever and hang
# the test in join() (CI, test_multiprocessing_children_open_the_breaker
# [fork]: 2-5 terminates in 100 hung; test_fixtures.py).
os.register_at_fork(after_in_child=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))

_seq = itertools.count()


def unlink_segment(name):
    try:
        os.unlink("/dev/shm/" + name.lstrip("/"))
    except FileNotFoundError:
        pass


@pytest.fixture
def shm_name():
    name = "/brkpyint-%d-%d" % (os.getpid(), next(_seq))
    unlink_segment(name)
    yield name
    unlink_segment(name)


@pytest.fixture
def seg(shm_name):
    import breakerd
    s = breakerd.attach(shm_name)
    yield s
    s.close()


@pytest.fixture
def upstream():
    up = _upstream.Upstream()
    yield up
    up.close()
