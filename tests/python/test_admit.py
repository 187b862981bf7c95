"""Segment.admit(): the gates in their fixed order (deadline, breaker,
pace, retry budget), the refusal codes, the release of an Admission, bad
arguments, and a real-clock wait for a pace slot seen by bctl."""

import gc
import signal
import threading
import time
import warnings

import pytest

import breakerd


def counters(br):
    return br.info()["counters"]


def test_a_job_with_1s_left_is_expired_at_once_when_the_wait_is_3s(seg, clock):
    br = seg.breaker("a/open")
    br.trip(for_=3)
    before = br.info()["signals"]["arrivals"]
    with pytest.raises(breakerd.DeadlineExpired) as ei:
        seg.admit(breaker=br, deadline=1, max_wait=10)
    e = ei.value
    assert isinstance(e, breakerd.Refused)
    assert e.code == "EXPIRED" and e.cause == "expired"
    assert 2.9 <= e.wait <= 3.0 + 1e-9
    assert br.info()["signals"]["arrivals"] == before  # no gate was asked
    # with time enough it is told to come back (a fake clock never sleeps)
    with pytest.raises(breakerd.CircuitOpen) as ei:
        seg.admit(breaker=br, deadline=5, max_wait=10)
    assert ei.value.code == "BREAKER_OPEN" and 0 < ei.value.wait <= 4
    clock.advance(ei.value.wait)
    with seg.admit(breaker=br, deadline=5, max_wait=10) as adm:  # the probe
        assert adm.code == "GO"
    assert br.state == "closed"


def test_a_pace_slot_after_the_deadline_is_expired_one_within_is_given(seg, clock):
    p = seg.pace("a/slow", ceiling=1, burst=1)  # one slot a second
    seg.admit(pace=p).success()
    with pytest.raises(breakerd.DeadlineExpired) as ei:
        seg.admit(pace=p, deadline=0.5, max_wait=5)
    assert ei.value.code == "EXPIRED"
    with pytest.raises(breakerd.NoTokens) as ei:
        seg.admit(pace=p, deadline=2, max_wait=2)
    assert ei.value.code == "RATE_LIMITED" and ei.value.cause == "no_tokens"
    assert 0 < ei.value.wait <= 2
    clock.advance(ei.value.wait)
    adm = seg.admit(pace=p, deadline=2, max_wait=2)
    assert adm.taken_at == seg.now_ns()
    assert adm.report_http(200) is True


def test_the_breaker_is_asked_before_the_pace(seg, clock):
    br = seg.breaker("a/order", max_concurrent=1)
    p = seg.pace("a/order:rate", ceiling=1, burst=1)
    held = seg.admit(breaker=br, pace=p)
    taken = p.info()["counters"]["taken"]
    with pytest.raises(breakerd.BulkheadFull) as ei:
        seg.admit(breaker=br, pace=p)
    assert ei.value.code == "BULKHEAD_FULL" and ei.value.breaker == "a/order"
    assert p.info()["counters"]["taken"] == taken  # the pace was not asked
    held.success()
    # the pace refuses: the breaker's permit goes back as cancelled
    with pytest.raises(breakerd.NoTokens) as ei:
        seg.admit(breaker=br, pace=p)
    assert ei.value.code == "RATE_LIMITED" and ei.value.breaker == "a/order:rate"
    assert br.info()["in_flight"] == 0 and counters(br)["cancelled"] == 1
    br.trip(for_=60)
    with pytest.raises(breakerd.CircuitOpen) as ei:
        seg.admit(breaker=br, pace=p)  # both would refuse: the breaker's code
    assert ei.value.code == "BREAKER_OPEN"


def test_the_retry_budget_comes_last(seg, clock):
    br = seg.breaker("a/retry")
    p = seg.pace("a/retry:rate", ceiling=1000)
    bg = seg.budget("a/retry:budget", floor=0, ratio=0.5)
    seg.admit(breaker=br, pace=p, budget=bg).success()  # a first attempt deposits
    assert bg.info()["counters"]["deposits"] == 1
    clock.advance("10ms")
    taken = p.info()["counters"]["taken"]
    with pytest.raises(breakerd.RetryDeferred) as ei:
        seg.admit(breaker=br, pace=p, budget=bg, attempt="retry")  # 0.5 < 1 token
    assert ei.value.code == "DEFERRED" and ei.value.breaker == "a/retry:budget"
    assert p.info()["counters"]["taken"] == taken + 1  # the slot is not given back
    assert br.info()["in_flight"] == 0 and counters(br)["cancelled"] == 1
    seg.admit(budget=bg).cancel()  # a second deposit: one whole token
    clock.advance("10ms")
    with seg.admit(breaker=br, pace=p, budget=bg, attempt="retry"):
        pass
    assert bg.info()["counters"]["retries"] == 1


def test_release_paths_and_outcome_codes(seg, clock):
    br = seg.breaker("a/rel", failure_threshold=100, implicit_pace=False)  # a 429 stays a failure (the implicit pace off)
    p = seg.pace("a/rel:rate", ceiling=100)
    with pytest.raises(TimeoutError):
        with seg.admit(breaker=br, pace=p) as adm:
            raise TimeoutError("slow")
    assert adm.outcome_code == "UPSTREAM_TIMEOUT"
    assert counters(br)["failures_by_reason"]["timeout"] == 1
    clock.advance("100ms")
    adm = seg.admit(breaker=br, pace=p)
    clock.advance("1ms")
    assert adm.report_http(429, {"Retry-After": "1"}) is True
    # the code of what was recorded: the breaker counted it throttled
    assert adm.outcome_code == "THROTTLED"
    c = counters(br)
    assert c["throttled"] == 1 and c["failures_by_reason"]["rate_limited"] == 0
    assert p.info()["pace"]["counters"]["cuts"] == 1
    assert adm.report_http(200) is False  # released once
    assert adm.outcome_code == "THROTTLED"
    # without a pace a 429 is a rate_limited failure, as with a Permit
    adm = seg.admit(breaker=br)
    adm.report_http(429)
    assert adm.outcome_code == "UPSTREAM_RATE_LIMITED"
    assert counters(br)["failures_by_reason"]["rate_limited"] == 1
    # a refusal raised inside the block: given up locally
    clock.advance("100ms")
    with pytest.raises(breakerd.Refused):
        with seg.admit(breaker=br, pace=p):
            raise breakerd.CircuitOpen(cause="open", breaker="elsewhere")
    assert counters(br)["cancelled"] == 1
    # the breaker's own classification: excluded exceptions are healthy
    br2 = seg.breaker("a/rel2", exclude=(KeyError,))
    with pytest.raises(KeyError):
        with seg.admit(breaker=br2):
            raise KeyError("no such user")
    assert counters(br2)["healthy_errors"] == 1
    assert repr(adm).startswith("<breakerd.Admission GO released")


def test_an_unreleased_admission_is_cancelled_with_a_warning(seg):
    br = seg.breaker("a/gc", max_concurrent=1)
    adm = seg.admit(breaker=br)
    assert br.info()["in_flight"] == 1
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        del adm
        gc.collect()
    assert [x.category for x in w] == [ResourceWarning]
    assert br.info()["in_flight"] == 0 and counters(br)["cancelled"] == 1


def test_high_priority_uses_the_reserved_bulkhead_share(seg):
    br = seg.breaker("a/res", max_concurrent=5, reserve_pct=20)  # one reserved
    held = [seg.admit(breaker=br) for _ in range(4)]
    with pytest.raises(breakerd.BulkheadFull) as ei:
        seg.admit(breaker=br)
    assert ei.value.code == "BULKHEAD_FULL"
    high = seg.admit(breaker=br, priority="high")
    assert br.info()["signals"]["remaining_concurrent"] == 0
    for adm in held + [high]:
        adm.success()


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(breaker="a/bad"), TypeError, "breaker"),
    (dict(pace="a/bad"), TypeError, "pace"),
    (dict(budget=3), TypeError, "budget"),
    (dict(), TypeError, "at least one"),
])
def test_bad_records(seg, kwargs, exc, word):
    with pytest.raises(exc, match=word):
        seg.admit(**kwargs)


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(attempt="third"), ValueError, "attempt"),
    (dict(attempt=1), TypeError, "attempt"),
    (dict(priority="urgent"), ValueError, "priority"),
    (dict(priority=None), TypeError, "priority"),
    (dict(deadline=-1), ValueError, "deadline"),
    (dict(deadline="soon"), ValueError, "deadline"),
    (dict(max_wait=-0.5), ValueError, "max_wait"),
    (dict(max_wait=[1]), TypeError, "max_wait"),
])
def test_bad_arguments_name_themselves_and_take_nothing(seg, kwargs, exc, word):
    br = seg.breaker("a/args", max_concurrent=1)
    with pytest.raises(exc, match=word):
        seg.admit(breaker=br, **kwargs)
    s = br.info()["signals"]
    assert s["arrivals"] == 0 and s["in_flight"] == 0


def test_records_of_another_segment_handle_are_refused(seg, shm, clock):
    other = breakerd.attach(shm, clock=clock)
    try:
        br = other.breaker("a/other")
        with pytest.raises(ValueError, match="another segment"):
            seg.admit(breaker=br)
    finally:
        other.close()


def test_bad_release_arguments(seg):
    adm = seg.admit(breaker=seg.breaker("a/relargs"))
    with pytest.raises(ValueError, match="outcome"):
        adm.report("bogus")
    with pytest.raises(ValueError, match="reason"):
        adm.failure("bogus")
    with pytest.raises(ValueError, match="retry_after"):
        adm.failure("timeout", retry_after=-1)
    assert not adm.released  # nothing was released by a bad call
    assert adm.success() is True


def test_admit_waits_for_a_pace_slot_and_bctl_sees_the_takes(realseg, bctl):
    bctl.run("pace", "x/adm", "--ceiling", "5", "--burst", "1")
    p = realseg.pace("x/adm", ceiling=5)
    with realseg.admit(pace=p):
        pass
    t0 = time.monotonic()
    with realseg.admit(pace=p, max_wait=2) as adm:  # the next slot: ~200 ms
        pass
    assert 0.05 <= adm.waited <= 2 and time.monotonic() - t0 >= 0.05
    theirs = bctl.json("inspect", "x/adm")
    assert theirs["counters"]["taken"] == 2
    assert theirs["pace"]["counters"]["ok"] == 2


def test_close_refuses_while_an_admit_sleeps(realseg):
    p = realseg.pace("x/sleep", ceiling=1, burst=1)
    realseg.admit(pace=p).success()
    out = {}

    def wait_for_slot():
        try:
            out["adm"] = realseg.admit(pace=p, max_wait=3)
        except BaseException as e:  # noqa: BLE001 - reported below
            out["err"] = e

    t = threading.Thread(target=wait_for_slot)
    t.start()
    time.sleep(0.2)  # the slot is ~1 s away: the thread sleeps in admit()
    with pytest.raises(RuntimeError, match="in use"):
        realseg.close()
    t.join(10)
    assert "adm" in out, out
    out["adm"].success()


class _Alarm(Exception):
    pass


def test_a_signal_interrupts_an_admit_that_sleeps(realseg):
    """Trying to break it: KeyboardInterrupt during admit(max_wait=5) came
    after the whole sleep (4.89 s); a signal whose handler raises now ends
    the wait at once, one that does not lets it wait on."""
    p = realseg.pace("x/intr", ceiling=0.5, burst=1)  # a slot every 2 s
    realseg.admit(pace=p).success()

    def raising(signum, frame):
        raise _Alarm()

    old = signal.signal(signal.SIGALRM, raising)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        t0 = time.monotonic()
        with pytest.raises(_Alarm):
            realseg.admit(pace=p, max_wait=5)
        assert time.monotonic() - t0 < 1.5
        # nothing was taken: the slot is still there for the next caller
        signal.signal(signal.SIGALRM, lambda signum, frame: None)
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        t0 = time.monotonic()
        adm = realseg.admit(pace=p, max_wait=5)  # waits on after the signal
        assert time.monotonic() - t0 >= 0.5
        adm.success()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_bad_reserve_pct_names_itself(seg):
    with pytest.raises(ValueError, match="reserve_pct"):
        seg.breaker("a/badres", max_concurrent=4, reserve_pct=95)
    with pytest.raises(TypeError, match="reserve_pct"):
        seg.breaker("a/badres", reserve_pct="lots")
    assert seg.record_count() == 0
    br = seg.breaker("a/goodres", max_concurrent=4, reserve_pct=50)
    assert br.info()["config"]["reserve_pct"] == 50


def test_hold_histogram_is_opt_in(seg, clock):
    plain = seg.breaker("a/plain")
    assert plain.info()["config"]["hold_histogram"] is False
    with plain:
        pass
    assert plain.info()["hold_time"]["state"] == "off"
    br = seg.breaker("a/timed", hold_histogram=True)
    assert br.info()["config"]["hold_histogram"] is True
    with br:
        clock.advance(0.02)
    h = br.info()["hold_time"]
    assert h["state"] == "recorded" and h["count"] == 1 and h["sum_us"] == 20000
    br.configure(hold_histogram=False)  # stops recording, keeps the counts
    with br:
        pass
    h = br.info()["hold_time"]
    assert br.info()["config"]["hold_histogram"] is False
    assert h["state"] == "recorded" and h["count"] == 1
    with pytest.raises(TypeError, match="hold_histogram"):
        seg.breaker("a/badhold", hold_histogram="yes")
    with pytest.raises(TypeError, match="hold_histogram"):
        seg.breaker("a/badhold", hold_histogram=1)


def test_hold_time_buckets_are_cumulative_like_prometheus_le(seg, clock):
    br = seg.breaker("a/cumul", hold_histogram=True)
    for hold in (0.001, 0.02, 0.3, 20.0):
        with br:
            clock.advance(hold)
    b = br.info()["hold_time"]["buckets"]
    assert [e["le"] for e in b] == [0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                    0.5, 1.0, 2.5, 5.0, 10.0, "+Inf"]
    # holds <= le: 0.001 | 0.02 | 0.3 | 20 (only +Inf)
    assert [e["count"] for e in b] == [1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 4]
    assert b[-1]["count"] == br.info()["hold_time"]["count"] == 4


def test_a_throttled_release_is_a_completion_in_bctl_metrics(realseg, bctl):
    br = realseg.breaker("x/thr")
    p = realseg.pace("x/thr:rate", ceiling=100)
    realseg.admit(breaker=br, pace=p).report_http(429, {"Retry-After": "1"})
    realseg.admit(breaker=br).success()
    s = br.info()["signals"]
    c = br.info()["counters"]
    assert c["throttled"] == 1 and c["failures"] == 0
    assert s["arrivals"] == 2 and s["completions"] == 2
    text = bctl.run("metrics", "--prefix", "x/thr").stdout
    assert 'breakerd_throttled_total{name="x/thr"} 1\n' in text
    assert 'breakerd_completions_total{name="x/thr"} 2\n' in text
    assert 'breakerd_arrivals_total{name="x/thr"} 2\n' in text
    assert bctl.json("inspect", "x/thr")["signals"]["completions"] == 2


def test_every_refusal_carries_its_code(seg, clock):
    import pickle
    br = seg.breaker("a/codes", failure_threshold=1, max_concurrent=1)
    held = br.acquire()
    with pytest.raises(breakerd.BulkheadFull) as ei:
        br.acquire()
    assert ei.value.code == "BULKHEAD_FULL"
    held.failure("timeout")
    with pytest.raises(breakerd.CircuitOpen) as ei:
        br.acquire()
    assert ei.value.code == "BREAKER_OPEN"
    again = pickle.loads(pickle.dumps(ei.value))
    assert (again.code, again.cause, again.breaker) == ("BREAKER_OPEN", "open", "a/codes")
    bk = seg.bucket("a/codes:rl", rate=1, burst=1)
    bk.take()
    with pytest.raises(breakerd.NoTokens) as ei:
        bk.take()
    assert ei.value.code == "RATE_LIMITED"
    bg = seg.budget("a/codes:budget", floor=0, ratio=0.1)
    with pytest.raises(breakerd.RetryDeferred) as ei:
        bg.retry()
    assert ei.value.code == "DEFERRED"
    cool = seg.breaker("a/codes:cool", max_wait="1m", implicit_pace=False)
    cool.acquire().report_http(429, {"Retry-After": "30"})
    with pytest.raises(breakerd.Cooling) as ei:
        cool.acquire()
    assert ei.value.code == "COOLING"
    assert breakerd.Refused(cause="expired").code == "EXPIRED"


def test_info_shows_a_waiter_in_the_bulkhead_queue_as_bctl_does(realseg, bctl):
    """brk_info.queued (docs/design/limits.md "Fair bulkhead waits"): a
    thread's admit(max_wait=...) behind the only permit waits in the queue,
    and info()["queued"] says so, as `bctl inspect --json` does; None
    without a bulkhead."""
    br = realseg.breaker("x/q", max_concurrent=1)
    assert realseg.breaker("x/nq").info()["queued"] is None
    assert br.info()["queued"] == 0
    held = br.acquire()
    out = {}

    def wait_for_permit():
        try:
            with realseg.admit(breaker=br, max_wait=10) as adm:
                out["waited"] = adm.waited
        except BaseException as e:  # noqa: BLE001 - reported below
            out["err"] = e

    t = threading.Thread(target=wait_for_permit)
    t.start()
    try:
        end = time.monotonic() + 5
        while br.info()["queued"] != 1 and time.monotonic() < end:
            time.sleep(0.02)
        assert br.info()["queued"] == 1
        assert bctl.json("inspect", "x/q")["queued"] == 1
    finally:
        held.success()
        t.join(10)
    assert "err" not in out, out
    assert out["waited"] > 0
    assert br.info()["queued"] == 0
