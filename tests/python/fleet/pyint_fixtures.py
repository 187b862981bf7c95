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
