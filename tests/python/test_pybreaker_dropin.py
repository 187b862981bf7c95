"""breakerd.pybreaker beyond pybreaker's own suite: a named breaker is the
host-wide record (another process sees its fail_counter and its state),
an unnamed one is private and retired when collected, and the refusal is
a breakerd.CircuitOpen."""

import gc
import multiprocessing as mp

import pytest

import breakerd
import breakerd.pybreaker as pybreaker


@pytest.fixture
def pyb(realseg):
    pybreaker.use_segment(realseg)
    yield realseg
    pybreaker.use_segment(None)


def _child_fails(shm, q):
    pybreaker.use_segment(breakerd.attach(shm))
    cb = pybreaker.CircuitBreaker(fail_max=3, name="dropin/shared")
    for _ in range(2):
        try:
            cb.call(lambda: 1 / 0)
        except ZeroDivisionError:
            pass
    q.put(cb.fail_counter)


def test_named_breaker_is_shared_by_processes(pyb, shm):
    cb = pybreaker.CircuitBreaker(fail_max=3, name="dropin/shared")
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_fails, args=(shm, q))
    p.start()
    assert q.get(timeout=20) == 2
    p.join(10)
    assert cb.fail_counter == 2  # the other process's failures
    with pytest.raises(pybreaker.CircuitBreakerError) as ei:
        cb.call(lambda: 1 / 0)   # the third trips: the refusal class
    assert isinstance(ei.value, breakerd.CircuitOpen)
    assert cb.current_state == "open" and cb.fail_counter == 3


def test_unnamed_breaker_record_retired_when_collected(pyb):
    cb = pybreaker.CircuitBreaker(fail_max=1)
    name = cb._br.name
    assert name.startswith("pybreaker/anon/")
    with pytest.raises(pybreaker.CircuitBreakerError):
        cb.call(lambda: 1 / 0)
    del cb
    gc.collect()
    assert name not in [r["name"] for r in pyb.records()]


def test_constant_reset_timeout_and_refusal_message(pyb):
    cb = pybreaker.CircuitBreaker(fail_max=1, reset_timeout=30, name="dropin/const")
    cfg = cb._br.info()["config"]
    assert cfg["open_ms"] == cfg["max_open_ms"] == 30000
    assert str(pybreaker.CircuitBreakerError("down")) == "down"
