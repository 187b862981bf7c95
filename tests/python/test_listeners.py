"""Listeners (issue 24 scope 1): callbacks that hear every process's events
as they are written (brk_events_wait(): no polling). Real clock segments
(the listener thread sleeps in the kernel); the waits are bounded and
nothing asserts on time."""

import logging
import multiprocessing as mp
import os
import queue
import signal
import threading
import time

import pytest

import breakerd


def _get(q, timeout=10):
    return q.get(timeout=timeout)


def test_listener_hears_a_transition_of_another_process(realseg, shm):
    got = queue.Queue()
    realseg.breaker("lst/a")
    lst = realseg.add_listener(got.put, names="lst/a")

    def child():
        s = breakerd.attach(shm)
        s.breaker("lst/b").trip(for_=1)   # not heard: another name
        s.breaker("lst/a").trip(for_=1)
        os._exit(0)

    p = mp.get_context("fork").Process(target=child)
    p.start()
    p.join(10)
    ev = _get(got)
    assert ev["name"] == "lst/a" and ev["to"] == "open" and ev["reason"] == "trip"
    assert ev["pid"] == p.pid
    assert got.empty()
    assert lst.remove() is True


def test_kinds_filter_and_breaker_add_listener(realseg):
    got = queue.Queue()
    br = realseg.breaker("lst/k")
    br.add_listener(got.put, kinds={"reset"})
    br.trip(for_=5)
    br.reset()
    ev = _get(got)
    assert ev["reason"] == "reset"
    assert got.empty()


def test_raising_callback_is_logged_and_kept(realseg, caplog):
    got = queue.Queue()
    calls = []

    def bad(ev):
        calls.append(ev["seq"])
        raise RuntimeError("listener bug")

    realseg.add_listener(bad, names="lst/e")
    realseg.add_listener(got.put, names="lst/e")
    br = realseg.breaker("lst/e")
    with caplog.at_level(logging.ERROR, logger="breakerd.listeners"):
        br.trip(for_=5)
        _get(got)
        br.reset()
        _get(got)
    assert len(calls) == 2  # still registered after raising
    assert realseg.listener_stats()["errors"] == 2
    assert "listener bug" in caplog.text


def test_idle_listener_thread_does_not_wake(realseg):
    realseg.add_listener(lambda ev: None)
    for _ in range(100):  # the thread is in the kernel wait
        if realseg._s.events_waiters() >= 1:
            break
        time.sleep(0.01)
    w0 = realseg.listener_stats()["wakeups"]
    time.sleep(0.5)
    assert realseg.listener_stats()["wakeups"] == w0


def test_close_stops_the_listener_thread(shm):
    s = breakerd.attach(shm)
    s.add_listener(lambda ev: None)
    assert s.listener_stats()["running"]
    s.close()
    assert not any(t.name == "breakerd-listeners" and t.is_alive()
                   for t in threading.enumerate())


def test_forked_child_has_no_listeners(realseg, shm):
    realseg.add_listener(lambda ev: None)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        signal.alarm(30)  # a child that hangs dies; the parent's wait is bounded too
        st = realseg.listener_stats()
        os.write(w, b"1" if not st["running"] else b"0")
        os._exit(0)
    os.close(w)
    end = time.monotonic() + 60
    while os.waitpid(pid, os.WNOHANG)[0] == 0:
        if time.monotonic() > end:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child did not exit in 60 s")
        time.sleep(0.01)
    assert os.read(r, 1) == b"1"


def test_bad_listener_arguments(realseg):
    with pytest.raises(TypeError, match="callable"):
        realseg.add_listener(42)
    with pytest.raises(TypeError, match="names"):
        realseg.add_listener(print, names=5)
