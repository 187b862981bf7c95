#!/usr/bin/python3
"""bench/listener/listener.py [--events N] [--busy-threads K]

Latency from a transition written in process A to the listener callback
in process B (Segment.add_listener(): brk_events_wait(), a futex on the
event ring), p50 / p99 / max over --events transitions, with B idle and
with B's K other threads busy in pure-Python loops (they contend for the
GIL: the callback runs when the listener thread gets it back; Python's
switch interval is 5 ms). Latency = B's CLOCK_MONOTONIC at the callback
minus the event's mono_ns (A's CLOCK_MONOTONIC as it wrote the event; one
host, one clock). A spaces its transitions 2 ms apart so each is heard
alone.

Also: wake-ups of B's listener thread during 2 s with nothing happening
(the goal: 0), and the cost of a transition (trip + reset pair, in A)
with no listener on the host and with one, and what the counter reads
pybreaker's fail_counter maps to cost. Prints one JSON line per case.
Run with bench/listener/run.sh (builds the package against BUILD_DIR).
"""

import argparse
import json
import multiprocessing as mp
import os
import statistics
import threading
import time

import breakerd


def _busy(stop):
    x = 0
    while not stop.is_set():
        for i in range(1000):
            x += i * i


def listener_proc(shm, name, n, busy, ready, out):
    seg = breakerd.attach(shm)
    lat = []
    done = threading.Event()

    # the writer's mono_ns: CLOCK_MONOTONIC, read by A as it wrote the event
    def cb2(ev):
        t = time.monotonic_ns()
        if ev["reason"] == "trip":
            lat.append(t - ev["mono_ns"])
            if len(lat) >= n:
                done.set()

    seg.add_listener(cb2, names=name, kinds={"trip"})
    stop = threading.Event()
    threads = [threading.Thread(target=_busy, args=(stop,), daemon=True) for _ in range(busy)]
    for t in threads:
        t.start()
    # idle wake-ups: nothing is written for 2 s (only measured when idle)
    idle = None
    if busy == 0:
        time.sleep(0.2)
        w0 = seg.listener_stats()["wakeups"]
        time.sleep(2.0)
        idle = seg.listener_stats()["wakeups"] - w0
    ready.set()
    done.wait(120)
    stop.set()
    out.put({"lat": lat, "idle_wakeups_2s": idle, "stats": seg.listener_stats()})
    seg.close()


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def run_case(shm, n, busy):
    seg = breakerd.attach(shm)
    name = f"bench/listener/{busy}"
    br = seg.breaker(name)
    ctx = mp.get_context("fork")
    ready, out = ctx.Event(), ctx.Queue()
    p = ctx.Process(target=listener_proc, args=(shm, name, n, busy, ready, out))
    p.start()
    ready.wait(30)
    while seg._s.events_waiters() < 1:
        time.sleep(0.001)
    for _ in range(n):
        br.trip(for_=60)
        br.reset()
        time.sleep(0.002)
    res = out.get(timeout=150)
    p.join(10)
    lat_us = [x / 1000.0 for x in res["lat"]]
    seg.close()
    return {"case": f"A->B callback, B {'idle' if busy == 0 else f'{busy} busy Python threads'}",
            "events": len(lat_us), "p50_us": round(pct(lat_us, 50), 1),
            "p99_us": round(pct(lat_us, 99), 1), "max_us": round(max(lat_us), 1),
            "idle_wakeups_per_2s": res["idle_wakeups_2s"],
            "listener_stats": res["stats"]}


def transition_cost(shm, n, with_waiter):
    seg = breakerd.attach(shm)
    br = seg.breaker("bench/listener/cost")
    p = None
    if with_waiter:
        ctx = mp.get_context("fork")
        ready = ctx.Event()

        def waiter():
            s = breakerd.attach(shm)
            s.add_listener(lambda ev: None, names="bench/other")  # never matches
            ready.set()
            time.sleep(3600)
        p = ctx.Process(target=waiter, daemon=True)
        p.start()
        ready.wait(30)
        while seg._s.events_waiters() < 1:
            time.sleep(0.001)
    best = None
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            br.trip(for_=60)
            br.reset()
        dt = (time.perf_counter_ns() - t0) / n
        best = dt if best is None or dt < best else best
    if p is not None:
        p.kill()
        p.join()
    seg.close()
    return {"case": f"trip+reset pair (2 events), {'1 listener on the host' if with_waiter else 'no listener'}",
            "ns_per_pair_min_of_5": round(best)}


def counter_reads(shm, n=200000):
    """What pybreaker's fail_counter / current_state cost over a record:
    brk_breaker_counts() (a few loads) against info()'s snapshot."""
    import timeit
    seg = breakerd.attach(shm)
    br = seg.breaker("bench/listener/reads")
    out = {"case": "counter reads from Python (min of 5, ns per read)"}
    for label, stmt, k in (("br.failure_streak", "br.failure_streak", n),
                           ("br.state", "br.state", n),
                           ("br.counts()", "br.counts()", n),
                           ("br.info()['consecutive_failures']",
                            "br.info()['consecutive_failures']", n // 20)):
        t = min(timeit.repeat(stmt, globals={"br": br}, number=k, repeat=5)) / k * 1e9
        out[label] = round(t)
    seg.close()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=500)
    ap.add_argument("--busy-threads", type=int, default=4)
    args = ap.parse_args()
    shm = f"/brk-listener-bench-{os.getpid()}"
    try:
        print(json.dumps(run_case(shm, args.events, 0)))
        print(json.dumps(run_case(shm, args.events, args.busy_threads)))
        print(json.dumps(transition_cost(shm, 2000, False)))
        print(json.dumps(transition_cost(shm, 2000, True)))
        print(json.dumps(counter_reads(shm)))
    finally:
        try:
            os.unlink("/dev/shm" + shm)
        except FileNotFoundError:
            pass


if __name__ == "__main__":
    main()
