#!/usr/bin/python3
"""pace_sim.py - discrete-event simulation of a pace (breaker.h "Pacing
(learned rate)", lib/src/pace.c) in front of nginx's limit_req.

  /usr/bin/python3 bench/pace_sim.py [--seeds N] [--latency-ms L]
         [--beta B] [--c C] [--burst N] [--estimator cut|1s]

Model (no real time, no network):
  * nginx limit_req, ngx_http_limit_req_module.c: per-ms leaky bucket,
    excess (milli-requests) = max(0, excess - rate * ms) + 1000; refused
    (429, state untouched) when excess > burst * 1000; "nodelay": an
    accepted request is answered at once. rate=5r/s burst=5.
  * 8 workers, each: take from the shared pace (normal priority); refused:
    sleep to not_before + jitter U[0, T) (brk_bucket_wake_ns) and take
    again; taken: the request reaches nginx after half the round trip, the
    answer comes back after the other half, then brk_pace_report(OK or
    LIMITED, taken_at) and the next take at once. The round trip is
    --latency-ms (default 8 ms: bctl exec spawning curl) times U[0.5, 1.5].
  * The pace is a port of pace.c / pace_curve.c: the rate curve, the GCRA
    take on one TAT at T = 1e9/rate(now) and tau = burst * T, the cut rule
    (taken_at_ms >= cut_ms), the cut base (min(rate, estimate)).

Prints, per scenario, the figures issue 11 asks for:
  steady: 30 s at 5 r/s: goodput (accepted / (5 * 30 + 5)), 429 share.
  reload: 15 s at 5 r/s, then 20 r/s: s until the learned rate > 15;
          20 s later back to 5 r/s: s until the learned rate <= 7.5.
"""
import argparse
import heapq
import math
import random

CEILING = 100.0


class Pace:
    """Port of lib/src/pace.c (one process view; the words are fields)."""

    def __init__(self, ceiling, floor, burst, beta, c, estimator):
        self.ceil, self.floor, self.burst = ceiling, floor, burst
        self.beta, self.c = beta, c
        self.k = ((1.0 - beta) / c) ** (1.0 / 3.0)
        self.cut_ms = None  # None: never cut
        self.w_max = 0.0
        self.tat = 0.0
        self.est = [0, 0, 0]  # slot, cur, prev (BRK__BK_EST)
        self.since = [None, 0]  # cut the count belongs to, OK count (cut estimator)
        self.estimator = estimator
        self.cuts = 0
        self.empty_on_cut = True
        self.factor = 1.0
        self.idle_ms = 0  # > 0: a success after this long without one restarts the window
        self.last_ok_ms = None

    def rate(self, now_ms):
        if self.cut_ms is None:
            return self.ceil
        t = max(0.0, (now_ms - self.cut_ms) / 1e3)
        r = self.w_max * (1.0 + self.c * (t - self.k) ** 3)
        return min(max(r, self.floor), self.ceil)

    def take(self, now_ns):
        t = round(1e9 / self.rate(now_ns // 1_000_000))
        tau = t * self.burst
        base = max(self.tat, now_ns)
        nw = base + t
        if nw - now_ns > tau:
            return False, nw - tau, t
        self.tat = nw
        return True, now_ns, t

    def est1s(self, now_ms):
        slot, cur, prev = self.est
        s = now_ms // 1000
        left = 1.0 - (now_ms % 1000) / 1e3
        if slot == s:
            return cur + prev * left
        if slot + 1 == s:
            return cur * left
        return 0.0

    def ok(self, now_ms):
        s = now_ms // 1000
        slot, cur, prev = self.est
        if slot == s:
            self.est = [s, min(cur + 1, 65535), prev]
        elif slot + 1 == s:
            self.est = [s, 1, cur]
        else:
            self.est = [s, 1, 0]
        idle = self.idle_ms > 0 and self.last_ok_ms is not None and \
            now_ms - self.last_ok_ms >= self.idle_ms
        self.last_ok_ms = now_ms
        if self.cut_ms is None:
            return
        if idle:
            self.since = [now_ms, 1]
        elif self.since[0] is not None and self.since[0] >= self.cut_ms:
            self.since[1] += 1
        else:
            self.since = [self.cut_ms, 1]

    def estimate(self, now_ms):
        e = self.est1s(now_ms)
        if self.estimator == 'cut' and self.cut_ms is not None and \
                self.since[0] is not None and self.since[0] >= self.cut_ms and \
                now_ms - self.since[0] >= 1000:
            e = self.since[1] * 1e3 / (now_ms - self.since[0]) * self.factor
        return e

    def limited(self, taken_ns, now_ns):
        taken_ms, now_ms = taken_ns // 1_000_000, now_ns // 1_000_000
        if self.cut_ms is not None and taken_ms < self.cut_ms:
            return False
        r = self.rate(now_ms)
        e = self.estimate(now_ms)
        base = e if 0.0 < e < r else r
        self.w_max = min(max(base, self.floor), self.ceil)
        self.cut_ms = now_ms
        self.cuts += 1
        if self.empty_on_cut:
            # the bucket is emptied at the new rate: the next token one
            # new interval from now (no burst right after a cut)
            t = 1e9 / self.rate(now_ms)
            self.tat = max(self.tat, now_ns + t * self.burst)
        return True


class Nginx:
    """limit_req zone, rate R r/s, burst B, nodelay (ms resolution)."""

    def __init__(self, rate, burst):
        self.rate_milli = int(rate * 1000)
        self.burst = burst * 1000
        self.excess = 0
        self.last_ms = None

    def request(self, now_ns):
        now_ms = now_ns // 1_000_000
        ms = 0 if self.last_ms is None else max(0, now_ms - self.last_ms)
        excess = self.excess - self.rate_milli * ms // 1000 + 1000
        if excess < 0:
            excess = 0
        if excess > self.burst:
            return 429
        self.excess, self.last_ms = excess, now_ms
        return 200


def run(seed, args, seconds, schedule, sample=None, nginx_burst=5, pause=None):
    rnd = random.Random(seed)
    p = Pace(CEILING, CEILING / 100.0, args.burst, args.beta, args.c, args.estimator)
    p.empty_on_cut = not args.no_empty
    p.factor = args.factor
    p.idle_ms = args.idle_reset_ms
    ng = Nginx(schedule[0][1], nginx_burst)
    ev = []
    for w in range(8):
        heapq.heappush(ev, (rnd.uniform(0, 1e6), 0, w, None))
    end = seconds * 1_000_000_000
    sched = list(schedule[1:])
    stats = {'req': 0, 'ok': 0, 'r429': 0, 'ok_after': 0}
    samples = []
    next_sample = 0
    while ev:
        now, kind, w, taken = heapq.heappop(ev)
        if now > end:
            break
        while sched and sched[0][0] * 1e9 <= now:
            ng.rate_milli = int(sched.pop(0)[1] * 1000)
        while sample and next_sample <= now:
            samples.append((next_sample / 1e9, p.rate(int(next_sample) // 1_000_000)))
            next_sample += sample * 1e6
        now = int(now)
        if kind == 0:  # take
            if pause and pause[0] * 1e9 <= now < pause[1] * 1e9:
                heapq.heappush(ev, (pause[1] * 1e9 + rnd.uniform(0, 1e6), 0, w, None))
                continue
            ok, nb, t = p.take(now)
            if not ok:
                heapq.heappush(ev, (nb + rnd.uniform(0, t), 0, w, None))
                continue
            rtt = args.latency_ms * 1e6 * rnd.uniform(0.5, 1.5)
            heapq.heappush(ev, (now + rtt / 2, 1, w, (now, rtt)))
        elif kind == 1:  # at nginx
            code = ng.request(now)
            heapq.heappush(ev, (now + taken[1] / 2, 2, w, (taken[0], code)))
        else:  # answer
            taken_at, code = taken
            stats['req'] += 1
            if code == 200:
                stats['ok'] += 1
                if pause and now >= pause[1] * 1e9:
                    stats['ok_after'] += 1
                p.ok(now // 1_000_000)
            else:
                stats['r429'] += 1
                p.limited(taken_at, now)
            heapq.heappush(ev, (now, 0, w, None))
    stats['cuts'] = p.cuts
    return stats, samples


def first_time(samples, after, pred):
    for t, r in samples:
        if t >= after and pred(r):
            return t - after
    return math.inf


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--seeds', type=int, default=10)
    ap.add_argument('--latency-ms', type=float, default=8.0)
    ap.add_argument('--beta', type=float, default=0.7)
    ap.add_argument('--c', type=float, default=0.05)
    ap.add_argument('--burst', type=int, default=2)
    ap.add_argument('--estimator', choices=['cut', '1s'], default='cut')
    ap.add_argument('--factor', type=float, default=1.0,
                    help='w_max = factor * the accepted rate since the last cut')
    ap.add_argument('--idle-reset-ms', type=int, default=2000,
                    help='a success after this long without one starts the '
                         'since-cut window afresh (0: never)')
    ap.add_argument('--no-empty', action='store_true',
                    help='do not empty the bucket on a cut (the first design)')
    args = ap.parse_args()
    good, share, up, down = [], [], [], []
    good32, share32, idle_good = [], [], []
    for seed in range(args.seeds):
        s, _ = run(seed, args, 30, [(0, 5.0)])
        good.append(s['ok'] / (5 * 30 + 5))
        share.append(s['r429'] / s['req'])
        s, _ = run(seed, args, 60, [(0, 3.0)], nginx_burst=2)
        good32.append(s['ok'] / (3 * 60 + 2))
        share32.append(s['r429'] / s['req'])
        s, _ = run(seed, args, 85, [(0, 5.0)], pause=(10, 70))
        idle_good.append(s['ok_after'] / (5 * 15 + 5))
        _, smp = run(seed, args, 60, [(0, 5.0), (15, 20.0), (40, 5.0)], sample=10)
        up.append(first_time(smp, 15, lambda r: r > 15.0))
        down.append(first_time(smp, 40, lambda r: r <= 7.5))
    print(f"pace_sim: beta {args.beta}, C {args.c}, burst {args.burst}, "
          f"estimator {args.estimator} x {args.factor}, round trip {args.latency_ms} ms, "
          f"{args.seeds} seeds")
    print(f"steady 5 r/s, 30 s: goodput min {min(good):.1%} mean "
          f"{sum(good) / len(good):.1%}; 429s max {max(share):.2%} mean "
          f"{sum(share) / len(share):.1%}")
    print(f"steady 3 r/s burst 2, 60 s: goodput min {min(good32):.1%} mean "
          f"{sum(good32) / len(good32):.1%}; 429s max {max(share32):.2%}")
    print(f"15 s after a 60 s idle spell (5 r/s): goodput min {min(idle_good):.1%} "
          f"mean {sum(idle_good) / len(idle_good):.1%}")
    print(f"reload 5 -> 20 r/s: learned > 15 after max {max(up):.2f} s "
          f"(mean {sum(up) / len(up):.2f} s)")
    print(f"reload 20 -> 5 r/s: learned <= 7.5 after max {max(down):.2f} s "
          f"(mean {sum(down) / len(down):.2f} s)")
    ok = min(good) >= 0.95 and max(share) <= 0.05 and max(up) <= 5 and max(down) <= 2
    print("targets (goodput >= 95 %, 429s <= 5 %, up <= 5 s, down <= 2 s):",
          "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == '__main__':
    raise SystemExit(main())
