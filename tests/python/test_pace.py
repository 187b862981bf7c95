"""Pace (a learned, host-wide rate), health states and fallback from
Python: the bindings on the fake clock, bad arguments naming themselves,
and one state shared with bctl and C processes."""

import pytest

import breakerd


def drain(pace, priority="normal"):
    """Take until refused; (tokens taken, the NoTokens raised)."""
    toks = []
    for _ in range(1000):
        try:
            toks.append(pace.take(priority=priority))
        except breakerd.NoTokens as e:
            return toks, e
    raise AssertionError("a pace never refused")


def test_pace_starts_at_its_ceiling_with_the_defaults(seg):
    p = seg.pace("p/a", ceiling=100)
    info = p.info()
    assert info["kind"] == "bucket" and info["paced"] is True
    pi = info["pace"]
    assert pi["rate"] == pytest.approx(100) and pi["ceiling"] == pytest.approx(100)
    assert pi["floor"] == pytest.approx(1)  # ceiling / 100
    assert info["burst"] == breakerd._core.PACE_DEFAULT_BURST == 2
    assert pi["reserve_pct"] == 0 and pi["last_cut_age_ms"] is None
    assert pi["counters"] == {"cuts": 0, "limited": 0, "ok": 0, "high_taken": 0}
    # settings only on create
    assert seg.pace("p/a", ceiling=5).info()["pace"]["ceiling"] == pytest.approx(100)
    assert repr(p) == "<breakerd.Pace p/a>"
    plain = seg.bucket("p/plain-a", rate=1, burst=1).info()
    assert "paced" not in plain and "pace" not in plain  # as bctl: unchanged


def test_take_refuses_with_the_wait_and_never_sleeps_on_a_fake_clock(seg, clock):
    p = seg.pace("p/b", ceiling=100)  # T = 10 ms
    toks, e = drain(p)
    assert 1 <= len(toks) <= 3  # the burst of 2 (plus the first)
    assert e.cause == "no_tokens" and e.breaker == "p/b"
    assert 0 < e.wait <= 0.03
    with pytest.raises(breakerd.NoTokens):
        p.take(wait=5)  # a fake clock: refused at once, not slept
    tok, w = p.try_take()
    assert tok is None and w > 0
    clock.advance("20ms")
    tok = p.take()
    assert isinstance(tok, breakerd.PaceToken) and tok.waited == 0.0
    assert tok.taken_at == seg.now_ns()


def test_429_cuts_once_per_round_trip_and_successes_count(seg, clock):
    p = seg.pace("p/c", ceiling=100)
    t1, t2 = p.take(), p.take()
    clock.advance("5ms")
    assert t1.report(429, headers={"Retry-After": "1"}) is True
    assert t1.cut is True
    info = p.info()["pace"]
    # no success known: the limit 0.7 x the ceiling, held at 0.97 x that
    assert info["rate"] == pytest.approx(67.9, rel=0.02)
    assert info["counters"]["cuts"] == 1 and info["counters"]["limited"] == 1
    # t2 was sent before the cut: its 429 is the same congestion, no second cut
    assert t2.report(429) is False
    assert p.info()["pace"]["counters"] == {"cuts": 1, "limited": 2, "ok": 0, "high_taken": 0}
    with pytest.raises(RuntimeError, match="already reported"):
        t2.report(200)
    clock.advance("1s")
    t3 = p.take()
    assert t3.report(200) is False  # a success: counted, no cut
    clock.advance("50ms")
    t4 = p.take()
    assert t4.report(500) is False  # a plain server error says nothing of the rate
    clock.advance("50ms")
    t5 = p.take()
    clock.advance("1ms")
    # 503 with a Retry-After, taken after the last cut: a second cut
    assert t5.report(outcome="failure", reason="overloaded", retry_after=2) is True
    c = p.info()["pace"]["counters"]
    assert c["ok"] == 1 and c["limited"] == 3 and c["cuts"] == 2
    # an explicit report by taken_at; the same failure without a
    # Retry-After is no rate signal
    clock.advance("1s")
    t6 = p.take()
    assert p.report(t6.taken_at, outcome="failure", reason="overloaded") is False
    clock.advance("1ms")
    assert p.report(t6.taken_at, outcome="failure", reason="rate_limited") is True
    assert p.info()["pace"]["counters"]["limited"] == 4


def test_token_context_manager_reports_ok_or_nothing(seg, clock):
    p = seg.pace("p/d", ceiling=1000)
    with p.take() as t:
        pass
    assert t.reported and p.info()["pace"]["counters"]["ok"] == 1
    with pytest.raises(ConnectionError):
        with p.take():
            raise ConnectionError("down")
    assert p.info()["pace"]["counters"]["ok"] == 1  # no signal
    clock.advance("10ms")
    with p.take() as t:
        t.report(429)  # reported inside: __exit__ adds nothing
    c = p.info()["pace"]["counters"]
    assert c["ok"] == 1 and c["limited"] == 1


def test_high_priority_gets_through_while_normal_is_refused(seg, clock):
    p = seg.pace("p/e", ceiling=100, reserve_pct=20)
    assert p.info()["pace"]["reserve_pct"] == 20
    normal = high = high_while_refused = 0
    for _ in range(200):  # 1 s of a flood of normal work, one high try per 5 ms
        clock.advance("5ms")
        try:
            p.take()
            normal += 1
            refused = False
        except breakerd.NoTokens:
            refused = True
        try:
            p.take(priority="high")
            high += 1
            high_while_refused += refused
        except breakerd.NoTokens:
            pass
    assert normal <= 0.8 * 100 + 3  # never the reserved 20 % (+ the burst)
    assert high >= 0.2 * 100 - 3 and high_while_refused >= 15
    assert p.info()["pace"]["counters"]["high_taken"] == high


def test_update_changes_only_what_is_given(seg):
    p = seg.pace("p/f", ceiling=100, floor=10, burst=4, reserve_pct=10)
    p.update(ceiling=200)
    i = p.info()
    assert i["pace"]["ceiling"] == pytest.approx(200) and i["pace"]["floor"] == pytest.approx(10)
    assert i["burst"] == 4 and i["pace"]["reserve_pct"] == 10
    p.update(reserve_pct=0, burst=2)
    i = p.info()
    assert i["burst"] == 2 and i["pace"]["reserve_pct"] == 0
    with pytest.raises(ValueError, match="floor"):
        p.update(ceiling=5, floor=10)
    with pytest.raises(ValueError, match="burst"):
        p.update(burst=0)
    i = p.info()  # nothing lost
    assert i["pace"]["ceiling"] == pytest.approx(200) and i["burst"] == 2
    p.update(ceiling=5)  # below the kept floor of 10: the floor follows (ceiling/100)
    assert p.info()["pace"]["floor"] == pytest.approx(0.05)


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(ceiling=0), ValueError, "ceiling"),
    (dict(ceiling=2e9), ValueError, "ceiling"),
    (dict(ceiling="fast"), TypeError, "ceiling"),
    (dict(ceiling=True), TypeError, "ceiling"),
    (dict(ceiling=10, floor=20), ValueError, "floor"),
    (dict(ceiling=10, floor=0), ValueError, "floor"),
    (dict(ceiling=10, burst=0), ValueError, "burst"),
    (dict(ceiling=10, burst=1.5), TypeError, "burst"),
    (dict(ceiling=10, reserve_pct=91), ValueError, "reserve_pct"),
    (dict(ceiling=10, reserve_pct=-1), ValueError, "reserve_pct"),
])
def test_bad_pace_settings_name_the_argument_and_create_nothing(seg, kwargs, exc, word):
    with pytest.raises(exc, match=word):
        seg.pace("p/bad", **kwargs)
    assert seg.record_count() == 0


def test_bad_take_and_report_arguments(seg):
    with pytest.raises(TypeError, match="ceiling"):
        seg.pace("p/g")
    with pytest.raises(ValueError, match="name"):
        seg.pace("bad name", ceiling=1)
    p = seg.pace("p/g", ceiling=10)
    with pytest.raises(ValueError, match="priority"):
        p.take(priority="urgent")
    with pytest.raises(TypeError, match="priority"):
        p.take(priority=1)
    with pytest.raises(ValueError, match="wait"):
        p.take(wait=-1)
    with pytest.raises(TypeError, match="wait"):
        p.take(wait=[1])
    t = p.take()
    with pytest.raises(TypeError, match="taken_at"):
        p.report("yesterday", 429)
    with pytest.raises(TypeError, match="status= .* or outcome="):
        p.report(t.taken_at)
    with pytest.raises(TypeError, match="status= .* or outcome="):
        p.report(t.taken_at, 429, outcome="failure")
    with pytest.raises(ValueError, match="outcome"):
        p.report(t.taken_at, outcome="bogus")
    with pytest.raises(ValueError, match="reason"):
        p.report(t.taken_at, outcome="failure", reason="bogus")
    with pytest.raises(ValueError, match="status"):
        p.report(t.taken_at, 42)
    with pytest.raises(ValueError, match="retry_after"):
        p.report(t.taken_at, 429, retry_after=-3)
    assert p.info()["pace"]["counters"]["limited"] == 0  # nothing was counted
    seg.bucket("p/plain", rate=1, burst=1)
    seg.breaker("p/brk")
    for name in ("p/plain", "p/brk"):
        with pytest.raises(ValueError, match="another kind"):
            seg.pace(name, ceiling=10)


def test_a_pace_shared_with_bctl(realseg, bctl):
    bctl.run("pace", "x/pace", "--ceiling", "50", "--burst", "5")
    p = realseg.pace("x/pace", ceiling=999)  # exists: bctl's settings kept
    assert p.info()["pace"]["ceiling"] == pytest.approx(50)
    toks = [p.take(), p.take(), p.take(priority="high")]
    theirs = bctl.json("inspect", "x/pace")
    assert theirs["paced"] is True
    assert theirs["counters"]["taken"] == 3
    assert theirs["pace"]["counters"]["high_taken"] == 1
    assert toks[0].report(429, headers={"Retry-After": "1"}) is True
    theirs = bctl.json("inspect", "x/pace")
    assert theirs["pace"]["counters"]["cuts"] == 1
    assert theirs["pace"]["rate"] < 50
    # the other way: bctl changes the ceiling, Python sees it
    bctl.run("pace", "x/pace", "--ceiling", "80")
    assert p.info()["pace"]["ceiling"] == pytest.approx(80)
    mine = p.info()
    theirs = bctl.json("inspect", "x/pace")
    theirs.pop("segment", None)
    mine.pop("tokens"), theirs.pop("tokens"), mine.pop("full_in_ms"), theirs.pop("full_in_ms")
    for d in (mine, theirs):
        for k in ("rate", "accepted_per_s", "last_cut_age_ms", "last_denied_age_ms", "w_max"):
            d["pace"].pop(k)
        d.pop("rate_per_s"), d.pop("interval_ns")  # the learned rate moves with time
    assert mine == theirs


# ---- health ----------------------------------------------------------------

def test_health_of_a_subtree_and_fallback(seg, clock):
    seg.breaker("h/svc", failure_threshold=1, open="1h", max_open="2h")
    child = seg.breaker("h/svc/db", failure_threshold=1, open="1h", max_open="2h")
    h = seg.health("h/svc")
    assert h == {"name": "h/svc", "state": "live", "code": "GO", "by": "h/svc",
                 "since_age_ms": h["since_age_ms"], "children": 1,
                 "children_unavailable": 0}
    child.trip(for_="1h")
    h = seg.health("h/svc")
    assert (h["state"], h["code"], h["by"]) == ("partial", "PARTIAL", "h/svc/db")
    assert h["children_unavailable"] == 1
    clock.advance("2s")
    assert seg.health("h/svc")["since_age_ms"] == 2000  # recorded when it changed
    assert seg.health("h/svc/db")["state"] == "unavailable"
    assert seg.health("h/svc/db")["code"] == "BREAKER_OPEN"
    assert seg.set_fallback("h/svc", True) is True
    assert seg.set_fallback("h/svc", True) is False  # already on
    h = seg.health("h/svc")
    assert (h["state"], h["code"]) == ("fallback", "FALLBACK")
    assert seg.set_fallback("h/svc", False) is True
    assert seg.health("h/svc")["state"] == "partial"
    # a name with records under it only: computed, not recorded
    seg.breaker("h/only/x")
    assert seg.health("h/only")["since_age_ms"] is None


def test_paced_below_demand_is_delayed(seg, clock):
    seg.breaker("h/api")
    p = seg.pace("h/api:rate", ceiling=100)
    t = p.take()
    clock.advance("5ms")
    assert t.report(429) is True  # learned rate now below the ceiling
    drain(p)  # a refused take: demand above the rate
    h = seg.health("h/api")
    assert (h["state"], h["code"], h["by"]) == ("delayed", "RATE_LIMITED", "h/api:rate")
    clock.advance("2s")  # no refusal in the last second
    assert seg.health("h/api")["state"] == "live"


def test_bad_health_arguments(seg):
    seg.breaker("h/b")
    seg.bucket("h/k", rate=1, burst=1)
    with pytest.raises(LookupError, match="nope"):
        seg.health("nope")
    with pytest.raises(ValueError, match="name"):
        seg.health("bad name")
    with pytest.raises(TypeError, match="name"):
        seg.health(3)
    with pytest.raises(TypeError, match="on"):
        seg.set_fallback("h/b", 1)
    with pytest.raises(LookupError, match="nope"):
        seg.set_fallback("nope", True)
    with pytest.raises(ValueError, match="breaker"):
        seg.set_fallback("h/k", True)
    assert seg.health("h/b")["state"] == "live"  # nothing changed


def test_health_shared_with_bctl_and_a_c_process(realseg, bctl):
    realseg.breaker("x/h", failure_threshold=1, open="1h", max_open="2h")
    realseg.breaker("x/h/dep", failure_threshold=1, open="1h", max_open="2h")
    # a C process (the command bctl exec runs fails: bctl records it)
    assert bctl.run("exec", "x/h/dep", "--", "false", check=False).returncode == 1
    assert realseg.health("x/h")["state"] == "partial"
    assert bctl.json("health", "x/h")["state"] == "partial"
    realseg.set_fallback("x/h", True)
    theirs = bctl.json("health", "x/h")
    assert (theirs["state"], theirs["code"]) == ("fallback", "FALLBACK")
    bctl.run("fallback", "x/h", "off")
    mine = realseg.health("x/h")
    theirs = bctl.json("health", "x/h")
    assert mine["state"] == theirs["state"] == "partial"
    mine.pop("since_age_ms"), theirs.pop("since_age_ms")
    assert mine == theirs
    bctl.run("reset", "x/h/dep")
    assert realseg.health("x/h")["state"] == "live"
    p = bctl.run("health", "x/nothing", check=False)
    assert p.returncode == 1
    with pytest.raises(LookupError):
        realseg.health("x/nothing")


@pytest.mark.parametrize("make", [
    lambda s: s.pace("p/m", ceiling=0),
    lambda s: s.pace("p/m", ceiling=10, floor=1e12),
    lambda s: s.pace("p/m", ceiling=10, floor=20),
    lambda s: s.bucket("p/mb", rate=0, burst=1),
    lambda s: s.budget("p/mg", floor=1e9),
    lambda s: s.budget("p/mg", ratio=1e9),
])
def test_bad_rate_messages_give_the_bounds_as_numbers(seg, make):
    # PyErr_Format has no %g: the bounds once printed as a literal "%g..%g"
    with pytest.raises(ValueError) as e:
        make(seg)
    msg = str(e.value)
    assert "%" not in msg and any(c.isdigit() for c in msg), msg
    assert seg.record_count() == 0


def test_an_int_above_two_to_the_64_is_refused_not_clamped(seg):
    # brkpy_get_u64 clamped 2**64 and beyond to 2**64 - 1 where that was the
    # maximum: a report "taken" at the end of time, which always cuts
    p = seg.pace("p/big", ceiling=100)
    for bad in (2**64, 10**30):
        with pytest.raises(ValueError, match="taken_at must be at most 18446744073709551615"):
            p.report(bad, 429)
    assert p.info()["pace"]["counters"]["limited"] == 0
    with pytest.raises(ValueError, match="cursor"):
        seg.events(cursor=2**64)
