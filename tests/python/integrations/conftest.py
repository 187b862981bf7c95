"""Fixtures of the integration tests: a private segment per test and the
controllable loopback upstream of tests/python/fleet/upstream.py."""

import itertools
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "fleet"))

import upstream as _upstream  # noqa: E402

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
