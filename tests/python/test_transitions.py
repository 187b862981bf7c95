"""Every breaker transition reachable from Python, on the fake clock."""

import pytest

import breakerd
from conftest import fail_times


def test_threshold_opens_and_refusal_says_why(seg):
    br = seg.breaker("svc/a", failure_threshold=3, open="10s")
    fail_times(br, 2)
    assert br.state == "closed"
    fail_times(br, 1)
    assert br.state == "open"
    with pytest.raises(breakerd.CircuitOpen) as ei:
        with br:
            pytest.fail("the block ran while open")
    e = ei.value
    assert isinstance(e, breakerd.Refused)
    assert e.cause == "open"
    assert e.breaker == "svc/a"
    # jittered: [remaining, remaining + min(remaining/4, 5 s)]
    assert 10.0 <= e.wait <= 12.5
    assert br.info()["counters"]["rejected_open"] == 1


def test_cooled_probe_success_closes(seg, clock):
    br = seg.breaker("svc/b", failure_threshold=1, open="5s")
    fail_times(br, 1)
    clock.advance(4.9)
    with pytest.raises(breakerd.CircuitOpen):
        br.acquire()
    clock.advance("100ms")
    p = br.acquire()
    assert br.state == "half_open"
    # every probe slot taken: the next caller is refused as probes_busy
    with pytest.raises(breakerd.CircuitOpen) as ei:
        br.acquire()
    assert ei.value.cause == "probes_busy"
    assert p.success() is True
    assert br.state == "closed"
    reasons = [(e["from"], e["to"], e["reason"]) for e in seg.events()[0]]
    assert reasons == [("closed", "open", "threshold"), ("open", "half_open", "cooled"),
                       ("half_open", "closed", "probe_ok")]


def test_failed_probe_reopens_with_doubled_cooling(seg, clock):
    br = seg.breaker("svc/c", failure_threshold=1, open="10s", max_open="30s")
    fail_times(br, 1)
    clock.advance(10)
    fail_times(br, 1)  # the probe fails
    info = br.info()
    assert info["state"] == "open" and info["cooling_level"] == 1
    assert info["open_remaining_ms"] == 20000
    clock.advance(20)
    fail_times(br, 1)
    assert br.info()["open_remaining_ms"] == 30000  # capped by max_open


def test_success_threshold_needs_that_many_probes(seg, clock):
    br = seg.breaker("svc/d", failure_threshold=1, open="1s", half_open_probes=2,
                     success_threshold=2)
    fail_times(br, 1)
    clock.advance(1)
    p1, p2 = br.acquire(), br.acquire()
    p1.success()
    assert br.state == "half_open"
    p2.success()
    assert br.state == "closed"


def test_retry_after_cools_every_caller(seg, clock):
    br = seg.breaker("svc/e", max_wait="1m", implicit_pace=False)  # a 429 stays a failure (the implicit pace off)
    p = br.acquire()
    assert p.failure("rate_limited", retry_after=8) is True
    with pytest.raises(breakerd.Cooling) as ei:
        br.acquire()
    assert ei.value.cause == "cooling" and 8.0 <= ei.value.wait <= 10.0
    assert br.state == "closed"
    clock.advance(8)
    br.acquire().success()


def test_retry_after_above_max_wait_opens(seg):
    br = seg.breaker("svc/f", max_wait="10s", max_open="2h")  # cap: max_open (issue 22)
    br.acquire().report_http(429, {"retry-after": "3600"})
    info = br.info()
    assert info["state"] == "open" and info["open_remaining_ms"] == 3600000
    assert seg.events()[0][-1]["reason"] == "retry_after"


def test_bulkhead_full(seg):
    br = seg.breaker("svc/g", max_concurrent=2)
    a, b = br.acquire(), br.acquire()
    with pytest.raises(breakerd.BulkheadFull) as ei:
        br.acquire()
    assert ei.value.cause == "bulkhead_full" and ei.value.breaker == "svc/g"
    assert br.info()["in_flight"] == 2
    a.success()
    br.acquire().cancel()
    b.success()
    assert br.info()["in_flight"] == 0


def test_open_ancestor_refuses_and_is_named(seg):
    parent = seg.breaker("api", failure_threshold=1)
    child = seg.breaker("api/v1/users")
    fail_times(parent, 1)
    with pytest.raises(breakerd.CircuitOpen) as ei:
        child.acquire()
    assert ei.value.breaker == "api"
    assert child.state == "closed"


def test_failure_rate_opens(seg, clock):
    br = seg.breaker("svc/h", failure_threshold=1000, failure_rate=50, window="10s",
                     min_calls=4)
    for ok in (True, False, True, False):
        p = br.acquire()
        p.success() if ok else p.failure()
    assert br.state == "open"
    assert seg.events()[0][-1]["reason"] == "failure_rate"


def test_slow_calls_open(seg, clock):
    br = seg.breaker("svc/i", slow_call="1s", slow_rate=50, min_calls=2)
    for _ in range(2):
        with br:
            clock.advance(2)
    assert br.state == "open"
    assert seg.events()[0][-1]["reason"] == "slow_rate"


def test_trip_reset_and_forced_modes(seg, clock):
    br = seg.breaker("svc/j")
    assert br.trip(for_="30s") is True
    assert br.trip(for_=30) is False  # already open: not extended
    assert br.info()["open_remaining_ms"] == 30000
    br.reset()
    assert br.state == "closed"
    assert br.force_open() is True
    with pytest.raises(breakerd.CircuitOpen) as ei:
        br.acquire()
    assert ei.value.cause == "forced_open"
    assert br.info()["mode"] == "forced_open"
    assert br.disable() is True
    br.trip(for_=60)
    br.acquire().success()  # disabled: admitted although open
    assert br.metrics_only() is True
    br.acquire().success()  # metrics-only never refuses
    assert br.info()["mode"] == "metrics_only"
    assert br.normal() is True and br.normal() is False
    with pytest.raises(breakerd.CircuitOpen):
        br.acquire()
    assert [e.get("mode") for e in seg.events()[0] if e["reason"] == "forced"] == [
        "forced_open", "disabled", "metrics_only", "normal"]


def test_configure_changes_an_existing_record(seg):
    br = seg.breaker("svc/k", failure_threshold=5)
    again = seg.breaker("svc/k", failure_threshold=1)  # settings only on create
    assert again.info()["config"]["failure_threshold"] == 5
    br.configure(failure_threshold=2, open="1m")
    cfg = br.info()["config"]
    assert cfg["failure_threshold"] == 2 and cfg["open_ms"] == 60000
    fail_times(again, 2)
    assert br.state == "open"


def test_probe_older_than_probe_timeout_is_reclaimed(seg, clock):
    br = seg.breaker("svc/l", failure_threshold=1, open="1s", probe_timeout="5s")
    fail_times(br, 1)
    clock.advance(1)
    probe = br.acquire()
    assert br.info()["probes_in_flight"] == 1
    clock.advance(5)
    # the next caller reclaims the stuck probe: a failed probe, cooling doubled
    with pytest.raises(breakerd.CircuitOpen):
        br.acquire()
    info = br.info()
    assert info["state"] == "open" and info["open_remaining_ms"] == 2000
    assert info["counters"]["reclaimed"] == 1
    assert probe.success() is False  # its lease was taken back: not counted
    assert seg.events()[0][-2]["reason"] == "reclaim_probe_timeout"
