#!/usr/bin/python3
"""bench/python/bench.py [--redis-port PORT] [--runs N] [--quick]

``with br:`` on a closed breaker from Python (the breakerd package), side by
side in one run with the designs Python users pick today:

  (a) an in-process breaker in pybreaker's design (pybreaker is not packaged
      in Debian 12, so its design is re-written here): state objects behind
      a threading lock held across the call (pybreaker's
      ``CircuitBreaker.call`` does ``with self._lock:``), a memory storage
      with state + fail counter + success counter, a listener loop;
      measured with threading.Lock and with threading.RLock (pybreaker's);
  (b) the same breaker over a shared Redis, in the design of pybreaker's
      ``CircuitRedisStorage`` (python3-redis): per successful call on a
      closed breaker one GET of the state key and a SET of the fail counter
      to 0 (``reset_counter``) -- two round trips over loopback TCP.

Then 8 forked processes hammer ONE breakerd breaker and the counters in the
segment must add up exactly to the calls made (no lost update).

Prints a table (median ns per call of --runs runs [min - max], calls/s and
the cost relative to breakerd's ``with br:``) and GOAL lines; exit 0 if every
goal is met, 3 if one is missed, 1 on error. Use bench/python/run.sh, which
starts the private redis-server and finds the package.
"""

import argparse
import os
import statistics
import sys
import threading
import time

import breakerd

NS = 1e9


# ---- (a) pybreaker's design, in process ------------------------------------

class CircuitBreakerError(Exception):
    pass


class MemoryStorage:
    """pybreaker.CircuitMemoryStorage: state, fail counter, opened_at."""

    def __init__(self):
        self.state = "closed"
        self.counter = 0
        self.success_counter = 0
        self.opened_at = None

    def reset_counter(self):
        self.counter = 0

    def increment_counter(self):
        self.counter += 1

    def increment_success_counter(self):
        self.success_counter += 1


class LockBreaker:
    """A pybreaker-style breaker: every call takes the lock, reads the
    state, runs, and records the outcome through the storage."""

    def __init__(self, storage, lock, fail_max=5, reset_timeout=60.0):
        self._storage = storage
        self._lock = lock
        self.fail_max = fail_max
        self.reset_timeout = reset_timeout
        self.listeners = ()

    def __enter__(self):
        self._lock.acquire()
        try:
            state = self._storage.state
            if state == "open":
                opened = self._storage.opened_at or 0.0
                if time.monotonic() - opened < self.reset_timeout:
                    raise CircuitBreakerError("open")
                self._storage.state = "half-open"
        except BaseException:
            self._lock.release()
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self._storage.reset_counter()
                self._storage.increment_success_counter()
                if self._storage.state == "half-open":
                    self._storage.state = "closed"
                for listener in self.listeners:
                    listener.success(self)
            else:
                self._storage.increment_counter()
                if self._storage.counter >= self.fail_max:
                    self._storage.state = "open"
                    self._storage.opened_at = time.monotonic()
                for listener in self.listeners:
                    listener.failure(self, exc)
        finally:
            self._lock.release()
        return False


class _ClosedState:
    """pybreaker's CircuitClosedState call path, layer by layer."""

    name = "closed"

    def __init__(self, cb):
        self._breaker = cb

    def before_call(self, func, *args, **kwargs):
        pass

    def on_success(self):
        pass

    def on_failure(self, exc):
        if self._breaker._state_storage.counter >= self._breaker.fail_max:
            raise CircuitBreakerError("opened")

    def _handle_success(self):
        self._breaker._state_storage.reset_counter()
        self.on_success()
        for listener in self._breaker.listeners:
            listener.success(self._breaker)

    def call(self, func, *args, **kwargs):
        self.before_call(func, *args, **kwargs)
        for listener in self._breaker.listeners:
            listener.before_call(self._breaker, func, *args, **kwargs)
        try:
            ret = func(*args, **kwargs)
        except BaseException as e:
            self._breaker._state_storage.increment_counter()
            self.on_failure(e)
            raise
        self._handle_success()
        return ret


class FullPathBreaker:
    """pybreaker.CircuitBreaker.call(func) on a closed breaker, with every
    layer of its call path: the RLock, the ``state`` property comparing the
    storage's state with the cached state object, the state's ``call``,
    ``before_call``, listener loops, ``_handle_success`` -> storage
    ``reset_counter``. (pybreaker's ``with breaker.calling():`` adds a
    generator-based context manager on top.)"""

    def __init__(self, storage):
        self._lock = threading.RLock()
        self._state_storage = storage
        self._state = _ClosedState(self)
        self.fail_max = 5
        self.listeners = ()

    @property
    def current_state(self):
        return self._state_storage.state

    @property
    def state(self):
        if self.current_state != self._state.name:
            raise RuntimeError("the benchmark keeps the breaker closed")
        return self._state

    def call(self, func, *args, **kwargs):
        with self._lock:
            return self.state.call(func, *args, **kwargs)


# ---- (b) pybreaker's CircuitRedisStorage design ----------------------------

class RedisStorage:
    """pybreaker.CircuitRedisStorage: every read and write is a command."""

    def __init__(self, redis, namespace="bench"):
        self._redis = redis
        self._ns = "pybreaker:%s:" % namespace
        redis.set(self._ns + "state", "closed")
        redis.set(self._ns + "fail_counter", 0)

    @property
    def state(self):
        v = self._redis.get(self._ns + "state")
        return v.decode() if v is not None else "closed"

    @state.setter
    def state(self, value):
        self._redis.set(self._ns + "state", value)

    @property
    def counter(self):
        return int(self._redis.get(self._ns + "fail_counter") or 0)

    @property
    def opened_at(self):
        v = self._redis.get(self._ns + "opened_at")
        return float(v) if v else None

    @opened_at.setter
    def opened_at(self, value):
        self._redis.set(self._ns + "opened_at", value)

    def reset_counter(self):
        self._redis.set(self._ns + "fail_counter", 0)

    def increment_counter(self):
        self._redis.incr(self._ns + "fail_counter")

    def increment_success_counter(self):
        pass  # CircuitRedisStorage keeps no success counter


# ---- measurement -----------------------------------------------------------

def time_with(cm, n):
    """ns per ``with cm: pass`` over n calls."""
    rng = range(n)
    t0 = time.perf_counter_ns()
    for _ in rng:
        with cm:
            pass
    return (time.perf_counter_ns() - t0) / n


def time_call(call, n):
    """ns per ``call(noop)`` over n calls."""
    def noop():
        return None
    rng = range(n)
    t0 = time.perf_counter_ns()
    for _ in rng:
        call(noop)
    return (time.perf_counter_ns() - t0) / n


def time_empty(n):
    class Null:
        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False
    return time_with(Null(), n)


def measure(fn, n, runs):
    fn(max(n // 10, 1))  # warm up
    xs = [fn(n) for _ in range(runs)]
    return statistics.median(xs), min(xs), max(xs)


def procs_no_lost_update(shm, procs, per_proc):
    """``procs`` forked processes do ``per_proc`` ``with br:`` each on one
    breaker; returns (expected, counted successes, counted allowed, ns/call
    aggregate)."""
    with breakerd.attach(shm) as seg:
        br = seg.breaker("bench/py-procs", failure_threshold=5)
        c0 = br.info()["counters"]
    pids = []
    t0 = time.perf_counter_ns()
    for _ in range(procs):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                with breakerd.attach(shm) as seg:
                    b = seg.breaker("bench/py-procs")
                    for _ in range(per_proc):
                        with b:
                            pass
                code = 0
            finally:
                os._exit(code)
        pids.append(pid)
    bad = 0
    for pid in pids:
        _, st = os.waitpid(pid, 0)
        bad += st != 0
    elapsed = time.perf_counter_ns() - t0
    with breakerd.attach(shm) as seg:
        c1 = seg.breaker("bench/py-procs").info()["counters"]
    if bad:
        raise RuntimeError("%d benchmark processes failed" % bad)
    expected = procs * per_proc
    return (expected, c1["successes"] - c0["successes"], c1["allowed"] - c0["allowed"],
            elapsed / expected)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--redis-port", type=int, default=None)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="fewer calls (a smoke run)")
    ap.add_argument("--procs", type=int, default=8)
    args = ap.parse_args()
    n = 20000 if args.quick else 200000
    n_redis = 500 if args.quick else 3000
    per_proc = 20000 if args.quick else 200000

    shm = "/brkpybench-%d" % os.getpid()
    goals = []
    client = None
    try:
        seg = breakerd.attach(shm)
        br = seg.breaker("bench/py", failure_threshold=5)

        def acq(k):
            rng = range(k)
            t0 = time.perf_counter_ns()
            for _ in rng:
                br.acquire().success()
            return (time.perf_counter_ns() - t0) / k

        lock_b = LockBreaker(MemoryStorage(), threading.Lock())
        rlock_b = LockBreaker(MemoryStorage(), threading.RLock())
        full_b = FullPathBreaker(MemoryStorage())
        # (label, function of a call count -> ns per call, calls per run)
        cases = [
            ("breakerd  with br: (closed)", lambda k: time_with(br, k), n),
            ("breakerd  acquire().success()", acq, n),
            ("pybreaker design, threading.Lock", lambda k: time_with(lock_b, k), n),
            ("pybreaker design, threading.RLock", lambda k: time_with(rlock_b, k), n),
            ("breakerd  br.call(fn)", lambda k: time_call(br.call, k), n),
            ("pybreaker full call path, call(fn)",
             lambda k: time_call(full_b.call, k), n),
        ]
        if args.redis_port:
            import redis
            client = redis.Redis(host="127.0.0.1", port=args.redis_port)
            client.ping()
            redis_b = LockBreaker(RedisStorage(client), threading.RLock())
            cases.append(("pybreaker CircuitRedisStorage (TCP)",
                          lambda k: time_with(redis_b, k), n_redis))
        cases.append(("ref: empty with-statement", time_empty, n))

        # Interleaved rounds: a burst of load from other processes on this
        # machine hits every design of a round alike; the ratios are taken
        # per round, then their median.
        for _label, fn, k in cases:
            fn(max(k // 10, 1))  # warm up
        xs = {label: [] for label, _fn, _k in cases}
        for _ in range(args.runs):
            for label, fn, k in cases:
                xs[label].append(fn(k))
        assert br.state == "closed"
        seg.close()

        expected, succ, allowed, agg = procs_no_lost_update(shm, args.procs, per_proc)
    finally:
        if client is not None:
            client.close()
        try:
            os.unlink("/dev/shm" + shm)
        except FileNotFoundError:
            pass

    rows = [(label, 1, statistics.median(v), min(v), max(v)) for label, v in xs.items()]
    rows.append(("breakerd  with br: (aggregate)", args.procs, agg, agg, agg))
    B = xs["breakerd  with br: (closed)"]
    b_med = statistics.median(B)
    ratio = statistics.median(b / l for b, l in zip(B, xs["pybreaker design, threading.Lock"]))
    R = xs.get("pybreaker CircuitRedisStorage (TCP)")
    speed = statistics.median(r / b for b, r in zip(B, R)) if R else None

    print("== breakerd Python package: `with br:` on a closed breaker "
          "(median of %d runs; %s)" % (args.runs, sys.version.split()[0]))
    print("%-38s %5s %10s  %-22s %10s %9s" % ("operation", "procs", "ns/call", "[min - max]",
                                             "calls/s", "vs brkd"))
    for name, procs, med, lo, hi in rows:
        rate = procs * NS / med if procs == 1 else NS / med
        print("%-38s %5d %10.1f  [%-8.1f - %8.1f] %10s %8.2fx" % (
            name, procs, med, lo, hi, human(rate), med / b_med))
    print("(ns/call: wall clock; ratios: median of the per-round ratios; load average %s)"
          % " ".join("%.2f" % x for x in os.getloadavg()))
    print()
    print("lost updates: %d (of %d calls in %d processes: %d successes and %d allowed counted)"
          % (expected - min(succ, allowed), expected, args.procs, succ, allowed))

    goals.append(("1 process: `with br:` on a closed breaker <= 1 us per call",
                  b_med <= 1000.0, "%.0f ns vs target <= 1000 ns" % b_med))
    goals.append(("1 process: <= 0.5x the in-process lock breaker (pybreaker design)",
                  ratio <= 0.5, "%.2fx vs target <= 0.5x" % ratio))
    if speed is not None:
        goals.append(("1 process: >= 50x faster than the Redis-backed breaker "
                      "(CircuitRedisStorage design)", speed >= 50,
                      "%.0fx vs target >= 50x" % speed))
    else:
        goals.append(("1 process: >= 50x faster than the Redis-backed breaker", False,
                      "not measured: no redis-server (Debian package redis-server)"))
    lost_ok = succ == expected and allowed == expected
    goals.append(("%d processes: no lost updates" % args.procs, lost_ok,
                  "%d of %d" % (expected - min(succ, allowed), expected)))
    met = 0
    for text, ok, detail in goals:
        met += ok
        print("GOAL %s: %s (%s)" % (text, "met" if ok else "MISSED", detail))
    print("goals met: %d of %d" % (met, len(goals)))
    return 0 if met == len(goals) else 3


def human(rate):
    for unit, div in (("M", 1e6), ("k", 1e3)):
        if rate >= div:
            return "%.2f%s" % (rate / div, unit)
    return "%.0f" % rate


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, RuntimeError, ImportError) as e:
        print("bench.py: %s" % e, file=sys.stderr)
        sys.exit(1)
