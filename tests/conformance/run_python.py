"""The conformance runner for the Python binding: every scenario of the JSON
files named on the command line, on breakerd's FakeClock, one private
segment per scenario. Same format and output as run_c.c (README.md)."""

import json
import os
import sys

import breakerd
from breakerd.testing import FakeClock

LANG = "python"


class Mismatch(Exception):
    pass


def at_path(d, path):
    for part in path.split("."):
        if not isinstance(d, dict) or part not in d:
            return None
        d = d[part]
    return d


def matches(want, got, slack=0.0):
    if isinstance(want, list):
        return isinstance(got, (int, float)) and not isinstance(got, bool) and \
            want[0] - slack <= got <= want[1] + slack
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        return isinstance(got, (int, float)) and not isinstance(got, bool) and \
            abs(want - got) <= slack + 1e-9
    return want == got


class Run:
    def __init__(self, seg, clock):
        self.seg, self.clock = seg, clock
        self.recs, self.held = {}, {}

    def record(self, name, spec):
        kind = spec["kind"]
        if kind == "breaker":
            self.recs[name] = self.seg.breaker(name, **spec.get("settings", {}))
        elif kind == "bucket":
            self.recs[name] = self.seg.bucket(name, rate=spec["rate"], burst=spec["burst"])
        elif kind == "pace":
            kw = {k: spec[k] for k in ("floor", "burst") if k in spec}
            self.recs[name] = self.seg.pace(name, ceiling=spec["ceiling"], **kw)
        elif kind == "budget":
            self.recs[name] = self.seg.budget(name, floor=spec["floor"], ratio=spec["ratio"])
        else:
            raise Mismatch(f"record {name}: unknown kind {kind}")

    def answer(self, st, what, fn):
        """Run a gate call; check admitted/refused as the step says."""
        want = st.get("refused")
        try:
            got = fn()
        except breakerd.Refused as e:
            cls = type(e).__name__
            if cls != want:
                raise Mismatch(f"{what}: {cls}, want {want or 'admitted'}")
            if "cause" in st and e.cause != st["cause"]:
                raise Mismatch(f"{what}: cause {e.cause}, want {st['cause']}")
            if "by" in st and e.breaker != st["by"]:
                raise Mismatch(f"{what}: by {e.breaker}, want {st['by']}")
            if "wait_ms" in st and not matches(st["wait_ms"], e.wait * 1000.0, 1.0):
                raise Mismatch(f"{what}: wait {e.wait * 1000.0:.3f} ms outside {st['wait_ms']}")
            return None
        if want:
            raise Mismatch(f"{what}: admitted, want {want}")
        return got

    def release(self, st, permit):
        if "http" in st:
            headers = {"Retry-After": st["retry_after"]} if "retry_after" in st else None
            return permit.report_http(st["http"], headers)
        ra = st.get("retry_after_ms")
        ra = f"{ra}ms" if ra else None
        o = st["outcome"]
        if o == "success":
            return permit.success(retry_after=ra) if ra else permit.success()
        if o == "failure":
            return permit.failure(st.get("reason", "server_error"), retry_after=ra)
        if o == "healthy_error":
            return permit.healthy_error(retry_after=ra)
        if o == "rejected_request":
            return permit.rejected(retry_after=ra)
        if o == "cancelled":
            return permit.cancel()
        raise Mismatch(f"unknown outcome {o}")

    def step(self, st):
        if "advance" in st:
            self.clock.advance(st["advance"])
        elif "expect" in st:
            info = self.recs[st["expect"]].info()
            for key, want in st["info"].items():
                got = at_path(info, key)
                if got is None or not matches(want, got):
                    raise Mismatch(f"{st['expect']}: {key} is {got!r}, want {want!r}")
        elif "call" in st:
            br = self.recs[st["call"]]
            for _ in range(st.get("times", 1)):
                p = self.answer(st, f"acquire {st['call']}", br.acquire)
                if p is not None:
                    self.release(st, p)
        elif "acquire" in st:
            p = self.answer(st, f"acquire {st['acquire']}", self.recs[st["acquire"]].acquire)
            if p is not None:
                if "as" in st:
                    self.held[st["as"]] = p
                else:
                    p.cancel()
        elif "release" in st:
            counted = self.release(st, self.held[st["release"]])
            if "counted" in st and bool(counted) != st["counted"]:
                raise Mismatch(f"release {st['release']}: counted {counted}, want {st['counted']}")
        elif "admit" in st:
            br = self.recs[st["admit"]]
            a = self.answer(st, "admit", lambda: self.seg.admit(
                breaker=br, priority=st.get("priority", "normal")))
            if a is not None:
                if "as" in st:
                    self.held[st["as"]] = a
                else:
                    a.cancel()
        elif "op" in st:
            br = self.recs[st["breaker"]]
            op = st["op"]
            if op == "trip":
                br.trip(st["for"])
            elif op in ("reset", "force_open", "disable", "metrics_only", "normal"):
                getattr(br, op)()
            else:
                raise Mismatch(f"unknown op {op}")
        elif "take" in st:
            k = self.recs[st["take"]]
            self.answer(st, "take", lambda: k.take(st.get("n", 1)))
        elif "pace_take" in st:
            t = self.answer(st, "pace_take", self.recs[st["pace_take"]].take)
            if t is not None and "as" in st:
                self.held[st["as"]] = t
        elif "pace_report" in st:
            headers = {"Retry-After": st["retry_after"]} if "retry_after" in st else None
            cut = self.held[st["pace_report"]].report(st["http"], headers=headers)
            if "cut" in st and bool(cut) != st["cut"]:
                raise Mismatch(f"pace_report: cut {cut}, want {st['cut']}")
        elif "deposit" in st:
            for _ in range(st.get("times", 1)):
                self.recs[st["deposit"]].deposit()
        elif "retry" in st:
            for _ in range(st.get("times", 1)):
                self.answer(st, "retry", self.recs[st["retry"]].retry)
        else:
            raise Mismatch("unknown step")


def run_scenario(sc, n):
    shm = f"/brkconf-py-{os.getpid()}-{n}"
    clock = FakeClock()
    seg = breakerd.attach(shm, capacity=64, clock=clock)
    try:
        r = Run(seg, clock)
        for name, spec in sc.get("records", {}).items():
            r.record(name, spec)
        for i, st in enumerate(sc["steps"], 1):
            try:
                r.step(st)
            except (Mismatch, breakerd.Error, ValueError, TypeError, KeyError) as e:
                raise Mismatch(f"step {i} {json.dumps(st)}: {e}") from None
    finally:
        seg.close()
        try:
            os.unlink("/dev/shm" + shm)
        except FileNotFoundError:
            pass


def main(paths):
    passed = failed = skipped = n = 0
    for path in paths:
        with open(path) as f:
            scenarios = json.load(f)["scenarios"]
        for sc in scenarios:
            n += 1
            skip = sc.get("unsupported", {}).get(LANG)
            if skip:
                print(f"skip {sc['name']}: {skip}")
                skipped += 1
                continue
            try:
                run_scenario(sc, n)
            except Mismatch as e:
                print(f"not ok {sc['name']}: {e}")
                failed += 1
            else:
                print(f"ok {sc['name']}")
                passed += 1
    print(f"conformance ({LANG}): {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
