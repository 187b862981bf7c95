#!/usr/bin/python3
"""bench/python-hotpath/hotpath.py [--number N] [--repeat R]

The cost per call of breakerd's Python hot paths on a closed breaker, next
to a pybreaker-style in-process breaker (a threading.Lock, a state and a
fail counter, written here: pybreaker is not packaged in Debian) and the
floor of the ``with`` statement itself (a C context manager doing almost
nothing: ``with threading.Lock():``; and an empty Python context manager).

A fuller model of pybreaker's closed-state call path (RLock, the state
property, the state object's before_call / listeners / success handling)
is measured too.

Every case runs in the same process, interleaved, ``--repeat`` times; the
table gives the MIN ns/call (the least disturbed run on a shared machine)
and the ratio to the lock breaker of the same run. Goals (issue 8):
``with br: pass`` <= 1000 ns and <= 0.5x the lock breaker's ``with``.
Exit 0 if both goals are met, 3 if not. Run with bench/python-hotpath/run.sh.
"""

import argparse
import contextlib
import os
import sys
import threading
import timeit

import breakerd

try:
    from _nullcm import NullCM  # built by run.sh from nullcm.c
except ImportError:
    NullCM = None


class Open(Exception):
    pass


class LockBreaker:
    """pybreaker's design, reduced to its closed-state work: the lock held
    across the call, the state read, the fail counter reset on success or
    bumped on failure (opening at fail_max)."""

    def __init__(self, fail_max=5):
        self._lock = threading.Lock()
        self.state = "closed"
        self.fail_counter = 0
        self.fail_max = fail_max

    def __enter__(self):
        self._lock.acquire()
        if self.state == "open":
            self._lock.release()
            raise Open()
        return self

    def __exit__(self, et, ev, tb):
        try:
            if et is None:
                self.fail_counter = 0
                if self.state == "half_open":
                    self.state = "closed"
            else:
                self.fail_counter += 1
                if self.fail_counter >= self.fail_max:
                    self.state = "open"
        finally:
            self._lock.release()
        return False

    def call(self, fn, *args, **kwargs):
        with self._lock:
            if self.state == "open":
                raise Open()
            try:
                r = fn(*args, **kwargs)
            except BaseException:
                self.fail_counter += 1
                if self.fail_counter >= self.fail_max:
                    self.state = "open"
                raise
            self.fail_counter = 0
            return r


class _Storage:
    """pybreaker.CircuitMemoryStorage: state name, fail counter."""

    def __init__(self):
        self.state = "closed"
        self.counter = 0

    def reset_counter(self):
        self.counter = 0

    def increment_counter(self):
        self.counter += 1


class _Closed:
    """pybreaker.CircuitClosedState's call path (before_call, listeners,
    the call, _handle_success / _handle_error)."""

    name = "closed"

    def __init__(self, cb):
        self._breaker = cb

    def before_call(self, func, *args, **kwargs):
        pass

    def on_success(self):
        pass

    def call(self, func, *args, **kwargs):
        cb = self._breaker
        self.before_call(func, *args, **kwargs)
        for listener in cb.listeners:
            listener.before_call(cb, func, *args, **kwargs)
        try:
            ret = func(*args, **kwargs)
        except BaseException:
            cb._storage.increment_counter()
            if cb._storage.counter >= cb.fail_max:
                cb._storage.state = "open"
            raise
        cb._storage.reset_counter()
        self.on_success()
        for listener in cb.listeners:
            listener.success(cb)
        return ret


class PyBreakerModel:
    """pybreaker.CircuitBreaker.call(func) on a closed breaker: the RLock
    held across the call, the ``state`` property checking the storage's
    state name, the state object's call path."""

    def __init__(self, fail_max=5):
        self._lock = threading.RLock()
        self._storage = _Storage()
        self.fail_max = fail_max
        self.listeners = []
        self._state = _Closed(self)

    @property
    def state(self):
        if self._storage.state != self._state.name:  # another process changed it
            self._state = _Closed(self)
        return self._state

    def call(self, func, *args, **kwargs):
        with self._lock:
            return self.state.call(func, *args, **kwargs)


class EmptyCM:
    def __enter__(self):
        return self

    def __exit__(self, et, ev, tb):
        return False


def f():
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--number", type=int, default=200000)
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()

    shm = f"/brkbench-hot-{os.getpid()}"
    seg = breakerd.attach(shm)
    try:
        br = seg.breaker("bench/hot")
        guarded = br(f)
        lb = LockBreaker()
        lock = threading.Lock()
        ecm = EmptyCM()
        ns = dict(br=br, f=f, guarded=guarded, lb=lb, pb=PyBreakerModel(), lock=lock, ecm=ecm,
                  nullcontext=contextlib.nullcontext(), ncm=NullCM and NullCM())
        cases = [("f()  (a plain call)", "f()")]
        if NullCM:
            cases += [("with ncm: pass  (no-op C cm: the floor)", "with ncm: pass"),
                      ("ncm.call(f)  (no-op C call(): the floor)", "ncm.call(f)")]
        cases += [
            ("with lock: pass  (threading.Lock)", "with lock: pass"),
            ("with EmptyCM(): pass  (Python cm)", "with ecm: pass"),
            ("with nullcontext: pass", "with nullcontext: pass"),
            ("lock breaker: with lb: pass", "with lb: pass"),
            ("lock breaker: lb.call(f)", "lb.call(f)"),
            ("pybreaker model: pb.call(f)  (RLock, states)", "pb.call(f)"),
            ("breakerd: with br: pass", "with br: pass"),
            ("breakerd: br.call(f)", "br.call(f)"),
            ("breakerd: @br guarded()", "guarded()"),
            ("breakerd: p = br.acquire(); p.success()", "p = br.acquire(); p.success()"),
        ]
        best = {stmt: float("inf") for _, stmt in cases}
        timers = {stmt: timeit.Timer(stmt, globals=ns) for _, stmt in cases}
        for t in timers.values():  # warm up
            t.timeit(min(a.number, 20000))
        for _ in range(a.repeat):
            for _, stmt in cases:
                best[stmt] = min(best[stmt], timers[stmt].timeit(a.number) / a.number * 1e9)
        info = br.info()
    finally:
        seg.close()
        try:
            os.unlink("/dev/shm" + shm)
        except FileNotFoundError:
            pass

    lbw = best["with lb: pass"]
    print(f"python {sys.version.split()[0]}, {a.repeat} x {a.number} calls, "
          f"min ns/call; ratio = / lock breaker's `with`; load {os.getloadavg()[0]:.1f}")
    for label, stmt in cases:
        print(f"  {label:<46} {best[stmt]:8.0f} ns  {best[stmt] / lbw:5.2f}x")
    w = best["with br: pass"]
    goal_abs, goal_rel = w <= 1000, w <= 0.5 * lbw
    print(f"GOAL with br: <= 1000 ns: {'MET' if goal_abs else 'MISSED'} ({w:.0f} ns)")
    print(f"GOAL with br: <= 0.5x lock breaker: {'MET' if goal_rel else 'MISSED'} "
          f"({w / lbw:.2f}x)")
    print(f"info: with br: is {w - best.get('with ncm: pass', 0):.0f} ns above the no-op C "
          f"context manager; br.call(f) / pybreaker model: "
          f"{best['br.call(f)'] / best['pb.call(f)']:.2f}x")
    assert info["state"] == "closed", info
    return 0 if goal_abs and goal_rel else 3


if __name__ == "__main__":
    sys.exit(main())
