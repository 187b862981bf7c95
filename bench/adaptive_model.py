#!/usr/bin/python3
"""bench/adaptive_model.py - a model (not a measurement) of the learned
bulkhead limit (lib/src/adaptive.c, docs/design/limits.md "Adaptive
concurrency") against an idealised upstream: CALLERS closed-loop callers,
an upstream serving C calls at once in BASE ms each (latency = BASE x
max(1, in_flight / C)), its capacity halved at 60 s. Prints the limit and
the latency (x unloaded) over time, for the constants of adaptive.h and
for variants, to show the trade-offs the design note quotes:

    /usr/bin/python3 bench/adaptive_model.py [--long N] [--headroom sqrt|half|4]
"""
import argparse


def isqrt(n):
    q = 1
    while (q + 1) * (q + 1) <= n:
        q += 1
    return q


def step(st, short, inflight, lo, hi, long_windows, headroom):
    # the rule of adaptive.c brk__ac_step(), in floating point
    if st["n"] == 0:
        st["long"], st["n"] = short, 1
    elif st["n"] < 10:
        st["long"] = (st["long"] * st["n"] + short) / (st["n"] + 1)
        st["n"] += 1
    else:
        st["long"] += (short - st["long"]) * 2.0 / (long_windows + 1)
        st["n"] += 1
    if st["long"] / short > 2:
        st["long"] *= 0.9
    g = max(0.5, min(1.0, st["long"] / short))
    new = g * st["limit"] + headroom(st["limit"])
    new = 0.8 * st["limit"] + 0.2 * new
    if inflight < st["limit"] / 2 and new > st["limit"]:
        return
    st["limit"] = max(lo, min(hi, new))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--long", type=int, default=600, help="long window, in windows")
    ap.add_argument("--headroom", default="half", choices=["sqrt", "half", "4"])
    ap.add_argument("--callers", type=int, default=16)
    ap.add_argument("--capacity", type=int, default=4)
    ap.add_argument("--base-ms", type=float, default=20.0)
    a = ap.parse_args()
    hr = {"sqrt": lambda l: isqrt(int(l)),
          "half": lambda l: max(1, isqrt(int(l)) // 2),
          "4": lambda l: 4}[a.headroom]
    st = {"limit": 4.0, "long": 0.0, "n": 0}
    c, t, marks = a.capacity, 0.0, [1, 5, 10, 30, 59.9, 61, 62, 65, 70, 90, 120]
    print(f"# long {a.long} windows, headroom {a.headroom}, {a.callers} callers, "
          f"upstream {a.capacity} x {a.base_ms} ms, halved at 60 s")
    print("t_s  capacity  limit  latency_x")
    while t < 120 and marks:
        if t >= 60 and c == a.capacity:
            c = max(1, a.capacity // 2)
        inflight = min(a.callers, int(st["limit"]))
        lat = a.base_ms * max(1.0, inflight / c)
        step(st, lat * 1000, inflight, 1, 64, a.long, hr)
        # a window: >= 100 ms and >= 10 completions
        t += max(0.1, 10 * lat / 1000 / inflight)
        if t >= marks[0]:
            print(f"{marks.pop(0):5}  {c:8}  {st['limit']:5.1f}  {lat / a.base_ms:9.2f}")


if __name__ == "__main__":
    main()
