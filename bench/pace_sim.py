#!/usr/bin/python3
"""pace_sim.py - discrete-event simulation of a pace (breaker.h "Pacing
(learned rate)", lib/src/pace.c) in front of nginx's limit_req.

  /usr/bin/python3 bench/pace_sim.py [--seeds N] [--latency-ms L]
         [--rule hold|cubic] [--beta B] [--c C] [--burst N] [--estimator cut|1s]
  /usr/bin/python3 bench/pace_sim.py --matrix [--implicit] [--seeds N]
         [--latency-ms L] [--seconds S] [--set NAME=VALUE ...]

Rule (issue 21, --rule hold, the default): a port of pace_curve.c's
hold-and-probe (HOLD_GAIN ... below, breaker.h BRK_PACE_HOLD_GAIN ...);
--rule cubic is the CUBIC curve before it (beta, C). --matrix prints the
issue 21 matrix (limit {3,10,40} x burst {1,5,20} x workers {4,16,32},
worst seed, plus 10->4 and 4->20 mid-run) as bench/pace_matrix.sh does
against a real nginx; --implicit starts without a pace (the first 429
makes it, as a breaker's implicit pace). --set overrides a constant for
experiments.

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

# The hold-and-probe rule (pace_curve.c; breaker.h BRK_PACE_HOLD_GAIN ...)
HOLD_GAIN = 0.97      # hold at this x the limit found
HOLD_REQS = 30.0      # a hold lasts this many requests at the limit ...
HOLD_MIN_S = 2.0      # ... at least this long
HOLD_MAX_S = 10.0     # ... at most this long
PROBE_DOUBLE_S = 0.5  # then the rate doubles every this many s until a 429
PROBE_EST_SHARE = 0.9 # a probe's 429: limit >= this x the last second's 200s
PROBE_RULE = "E"
HOLD_SHORT_CUT = 0.9  # a 429 while holding, under 1 s of data: 0.9 x min(last second, rate)
GROW_DOUBLE_S = 0.5   # ... and every this many s while growing (startup)
PROBE_LONG_S = 1e9    # experiment, off (see limited())
GROW_RATIO = 1.1      # a probe that found this x the limit probes again at once
PROBE_RATE_CAP = 0.0
IMPLICIT_START = 2.0  # an implicit pace's first rate (no estimate yet), r/s


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

    rule = 'hold'
    startup = False  # an implicit pace before its first estimate: no hold

    def hold_s(self, w):
        return min(max(HOLD_REQS / w, HOLD_MIN_S), HOLD_MAX_S)

    def rate(self, now_ms):
        if self.cut_ms is None:
            return self.ceil
        t = max(0.0, (now_ms - self.cut_ms) / 1e3)
        if self.rule == 'hold':
            h = 0.0 if self.startup else self.hold_s(self.w_max)
            r = HOLD_GAIN * self.w_max
            if t > h:
                d = GROW_DOUBLE_S if self.startup else PROBE_DOUBLE_S
                r *= 2.0 ** min((t - h) / d, 60.0)
        else:
            r = self.w_max * (1.0 + self.c * (t - self.k) ** 3)
        return min(max(r, self.floor), self.ceil)

    def probing(self, now_ms):
        return self.cut_ms is None or self.startup or \
            (now_ms - self.cut_ms) / 1e3 > self.hold_s(self.w_max)

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
        if self.startup:
            print("startup cut", taken_ms, self.cut_ms) if False else None
        r = self.rate(now_ms)
        e = self.estimate(now_ms)
        grow = False
        e1 = self.est1s(now_ms)
        e_long = e if e != e1 or (self.since[0] is not None and
                                  now_ms - self.since[0] >= 1000) else 0.0
        if self.rule == 'hold' and PROBE_RULE == 'E':
            e_long = 0.0
            if self.cut_ms is not None and self.since[0] is not None and \
                    self.since[0] >= self.cut_ms and now_ms - self.since[0] >= 1000:
                e_long = self.since[1] * 1e3 / (now_ms - self.since[0])
        if self.rule == 'hold' and PROBE_RULE == 'E' and self.probing(now_ms):
            probe_s = 0.0 if self.cut_ms is None else \
                (now_ms - self.cut_ms) / 1e3 - (0.0 if self.startup else self.hold_s(self.w_max))
            if self.startup or self.w_max <= 0 or probe_s >= PROBE_LONG_S:
                # growing (or the first cut): the last second lags a
                # doubling rate. (PROBE_LONG_S, off: a probe that ran two
                # doublings before its 429 too - 3/1 64 -> 80 %, but the
                # 429s of 3/5 and 3/20 7 -> 12 %)
                base = max(self.w_max, e_long, PROBE_EST_SHARE * e1,
                           min(PROBE_EST_SHARE * r, PROBE_RATE_CAP * e1))
            else:
                # the cycle's accepted rate (exact while the upstream's
                # burst held what the hold left unused)
                base = max(self.w_max, e_long)
            base = min(base, r) if base > 0 else r * 0.7
            grow = base >= GROW_RATIO * self.w_max
        elif self.rule == 'hold' and PROBE_RULE == 'E' and self.cut_ms is not None:
            if e_long > 0:
                base = e_long if e_long < r else min(e_long, self.w_max)
            elif e1 > 0:
                base = HOLD_SHORT_CUT * min(e1, r)
            else:
                base = r * 0.7
        elif self.rule == 'hold' and self.probing(now_ms):
            # the probe found the limit: at least the limit held under
            # (no 429 in the hold), the since-cut average, or most of the
            # last second's accepted rate; never above the rate sent at
            e1 = self.est1s(now_ms)
            if PROBE_RULE == 'D' and (self.startup or self.w_max <= 0):
                base = max(self.w_max, e, PROBE_EST_SHARE * e1,
                           min(PROBE_EST_SHARE * r, PROBE_RATE_CAP * e1))
            elif PROBE_RULE == 'D':
                base = max(self.w_max, e, PROBE_EST_SHARE * e1)
            elif PROBE_RULE == 'C':
                base = max(self.w_max, e, PROBE_EST_SHARE * e1,
                           min(PROBE_EST_SHARE * r, PROBE_RATE_CAP * e1))
            else:
                base = max(self.w_max, e, PROBE_EST_SHARE * e1)
            base = min(base, r)
            # still finding more (BBR's Startup: growth of 25 % a round):
            # probe again at once instead of holding
            grow = base >= GROW_RATIO * self.w_max
        elif self.rule == 'hold' and self.cut_ms is not None:
            # a 429 while holding: the limit is below the hold rate
            if e <= 0.0:
                base = r * 0.7
            else:
                base = e if e < r else min(e, self.w_max)
        else:
            base = e if 0.0 < e < r else r
        self.w_max = min(max(base, self.floor), self.ceil)
        self.startup = grow
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


def run(seed, args, seconds, schedule, sample=None, nginx_burst=5, pause=None,
        workers=8, implicit=False):
    rnd = random.Random(seed)
    ceil = 1e6 if implicit else CEILING
    p = Pace(ceil, 0.01 if implicit else CEILING / 100.0, args.burst, args.beta,
             args.c, args.estimator)
    p.rule = args.rule
    p.empty_on_cut = not args.no_empty
    p.factor = args.factor
    p.idle_ms = args.idle_reset_ms
    ng = Nginx(schedule[0][1], nginx_burst)
    ev = []
    first429_ns = None
    for w in range(workers):
        heapq.heappush(ev, (rnd.uniform(0, 1e6), 0, w, None))
    end = seconds * 1_000_000_000
    sched = list(schedule[1:])
    stats = {'req': 0, 'ok': 0, 'r429': 0, 'ok_after': 0, 'wave': 0,
             'req_after_wave': 0, 'r429_after_wave': 0, 'ok_judged': 0,
             'req_judged': 0, 'r429_judged': 0}
    judge_ns = args.judge_from * 1e9 if hasattr(args, 'judge_from') else 0
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
            after = first429_ns is not None and taken_at >= first429_ns
            if after:
                stats['req_after_wave'] += 1
            if taken_at >= judge_ns:
                stats['req_judged'] += 1
                stats['ok_judged'] += code == 200
                stats['r429_judged'] += code != 200
            if code != 200:
                if after:
                    stats['r429_after_wave'] += 1
                else:
                    stats['wave'] += 1
            if code != 200 and implicit and first429_ns is None:
                # the implicit pace appears with this answer: no estimate
                # yet, it starts probing from IMPLICIT_START
                p.ceil, p.floor = 1e6, 0.01
                p.w_max = IMPLICIT_START
                p.cut_ms = now // 1_000_000 + 1
                p.startup = True
                p.est = [0, 0, 0]
                p.since = [None, 0]
                p.tat = now + 1e9 / IMPLICIT_START
                p.cuts += 1
                first429_ns = now
                heapq.heappush(ev, (now, 0, w, None))
                continue
            if code != 200 and first429_ns is None:
                first429_ns = now
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


def matrix(args):
    print(f"pace_sim matrix: rule {args.rule}, {'implicit' if args.implicit else 'declared (ceiling 100)'} "
          f"pace, {args.seconds} s per cell, {args.seeds} seeds (worst seed shown), "
          f"round trip {args.latency_ms} ms")
    print("goodput % of allowance / 429s % of sent after the cold-start wave / wave 429s")
    print(f"{'limit':>6} {'burst':>5} | " + " | ".join(f"{w:>2} workers          " for w in (4, 16, 32)))
    met = True
    for rate in (3, 10, 40):
        for burst in (1, 5, 20):
            cells = []
            for w in (4, 16, 32):
                g, sh, wv = [], [], []
                for seed in range(args.seeds):
                    s, _ = run(seed, args, args.seconds, [(0, float(rate))],
                               nginx_burst=burst, workers=w, implicit=args.implicit)
                    g.append(s['ok'] / (rate * args.seconds + burst))
                    sh.append(s['r429_after_wave'] / max(1, s['req_after_wave']))
                    wv.append(s['wave'])
                met &= min(g) >= 0.95 and max(sh) <= 0.05
                cells.append(f"{min(g):6.1%} {max(sh):5.1%} {max(wv):3d}")
            print(f"{rate:>6} {burst:>5} | " + " | ".join(f"{c:<21}" for c in cells))
    for a, b in ((10, 4), (4, 20)):
        for w in (4, 16, 32):
            g, sh, tt = [], [], []
            for seed in range(args.seeds):
                args.judge_from = 20
                s, smp = run(seed, args, 45, [(0, float(a)), (15, float(b))],
                             sample=10, nginx_burst=5, workers=w, implicit=args.implicit)
                args.judge_from = 0
                g.append(s['ok_judged'] / (b * 25))
                sh.append(s['r429_judged'] / max(1, s['req_judged']))
                if b > a:
                    tt.append(first_time(smp, 15, lambda r: r >= 0.9 * b))
                else:
                    tt.append(first_time(smp, 15, lambda r: r <= b / 0.9))
            met &= min(g) >= 0.95 and max(sh) <= 0.05
            print(f"limit {a:>2} -> {b:>2} at 15 s, burst 5, {w:>2} workers, judged 20-45 s: "
                  f"goodput min {min(g):.1%}, 429s max {max(sh):.1%}, "
                  f"time to 90 % max {max(tt):.2f} s")
    print("goals (goodput >= 95 %, 429s after the wave <= 5 %) in every cell:",
          "met" if met else "NOT met")
    return 0 if met else 1


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
    ap.add_argument('--rule', choices=['hold', 'cubic'], default='hold',
                    help='hold: hold under the limit found, probe briefly '
                         '(the rule now); cubic: the CUBIC curve before issue 21')
    ap.add_argument('--matrix', action='store_true',
                    help='the issue 21 matrix: limit {3,10,40} x burst '
                         '{1,5,20} x workers {4,16,32}, plus 10->4 and 4->20')
    ap.add_argument('--implicit', action='store_true',
                    help='no declared pace: it appears at the first 429')
    ap.add_argument('--seconds', type=int, default=30)
    ap.add_argument('--set', action='append', default=[],
                    help='NAME=VALUE: override a rule constant (experiments)')
    args = ap.parse_args()
    args.judge_from = 0
    for kv in args.set:
        k, v = kv.split('=', 1)
        globals()[k] = type(globals()[k])(v)
    if args.matrix:
        return matrix(args)
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
