"""info(), records() and events() say what `bctl inspect/list/events --json`
say about the same segment; buckets and budgets."""

import pytest

import breakerd
from conftest import fail_times


def without_segment(d):
    d = dict(d)
    d.pop("segment", None)
    return d


def test_info_matches_bctl_inspect(realseg, bctl):
    br = realseg.breaker("i/a", failure_threshold=4, open="45s", max_concurrent=3,
                         failure_rate=60, min_calls=30, slow_call="2s", slow_rate=70,
                         window="1h")  # no bucket rolls over between the two reads
    with br:
        pass
    fail_times(br, 2, TimeoutError)
    br.acquire().healthy_error()
    br.acquire().rejected()
    br.acquire().cancel()
    held = br.acquire()  # one lease out
    mine = br.info()
    theirs = without_segment(bctl.json("inspect", "i/a"))
    assert set(mine) == set(theirs)
    for lease in mine["leases"] + theirs["leases"]:
        lease.pop("age_ms")  # read at two different times
    for d in (mine, theirs):
        d["signals"].pop("oldest_in_flight_ms")  # likewise
    assert mine == theirs
    assert mine["signals"] == {"arrivals": 7, "completions": 6, "in_flight": 1,
                               "max_concurrent": 3, "half_open_probes": 1,
                               "remaining_concurrent": 2}
    assert mine["counters"]["failures_by_reason"]["timeout"] == 2
    assert mine["leases"][0]["kind"] == "permit"
    held.success()


def test_open_breaker_info_matches_bctl(realseg, bctl):
    br = realseg.breaker("i/b", failure_threshold=1, open="1h", max_open="2h")
    fail_times(br, 1)
    mine = br.info()
    theirs = without_segment(bctl.json("inspect", "i/b"))
    assert abs(mine.pop("open_remaining_ms") - theirs.pop("open_remaining_ms")) < 20000  # two reads, real time
    assert mine == theirs and mine["state"] == "open"


def test_bucket_and_budget_info_match_bctl(realseg, bctl):
    bk = realseg.bucket("i/rate", rate=0.01, burst=3)  # slow: no drift between reads
    bk.take(2)
    bg = realseg.budget("i/retries", floor=0, ratio=0.5)
    for _ in range(3):
        bg.deposit()
    bg.retry()
    for rec, name in ((bk, "i/rate"), (bg, "i/retries")):
        # the budget's pool halves at each 10 s epoch boundary: read again
        # if one fell between the two reads
        for _ in range(3):
            before = rec.info()
            theirs = without_segment(bctl.json("inspect", name))
            mine = rec.info()
            if before["pool" if "pool" in mine else "tokens"] == pytest.approx(
                    mine["pool" if "pool" in mine else "tokens"], abs=0.005):
                break
        assert set(mine) == set(theirs)
        for k in mine:
            if isinstance(mine[k], (float, dict)):  # dicts of numbers too
                assert mine[k] == pytest.approx(theirs[k], abs=0.01), k
            elif k != "full_in_ms":
                assert mine[k] == theirs[k], k
    listed = {r["name"]: r["kind"] for r in bctl.json("list")}
    assert listed == {r["name"]: r["kind"] for r in realseg.records()}


def test_events_match_bctl_events(seg, clock, bctl):
    br = seg.breaker("i/c", failure_threshold=1, open="2s")
    fail_times(br, 1)
    clock.advance(2)
    br.acquire().success()
    br.force_open()
    br.reset()
    mine, cursor = seg.events()
    theirs = [e for e in
              (__import__("json").loads(line) for line in
               bctl.run("events", "--json").stdout.splitlines())]
    assert len(mine) == len(theirs) == 5
    keys = ("seq", "name", "from", "to", "reason", "pid", "value")
    assert [{k: e[k] for k in keys} for e in mine] == [{k: e[k] for k in keys} for e in theirs]
    assert mine[3]["mode"] == "forced_open"
    assert cursor == mine[-1]["seq"] + 1
    assert seg.events(cursor) == ([], cursor)
    br.trip(for_=1)
    more, _ = seg.events(cursor)
    assert [e["reason"] for e in more] == ["trip"]
    assert [e["seq"] for e in seg.iter_events()] == [1, 2, 3, 4, 5, 6]
    assert seg.lost_events == 0


def test_bucket_take_and_wait(seg, clock):
    bk = seg.bucket("i/bucket", rate=10, burst=2)
    bk.take()
    bk.take()
    with pytest.raises(breakerd.NoTokens) as ei:
        bk.take()
    e = ei.value
    assert isinstance(e, breakerd.Refused) and e.cause == "no_tokens"
    assert e.breaker == "i/bucket"
    assert 0.1 <= e.wait < 0.2 + 1e-9  # next token in 100 ms, plus < T of jitter
    w = bk.try_take()
    assert 0.1 <= w < 0.2 + 1e-9
    clock.advance("100ms")
    assert bk.try_take() == 0.0
    info = bk.info()
    assert info["counters"] == {"taken": 3, "denied": 2, "tokens_taken": 3}
    bk.configure(rate=1000, burst=2)
    clock.advance("2ms")
    bk.take(2)
    again = seg.bucket("i/bucket", rate=1, burst=1)  # settings only on create
    assert again.info()["burst"] == 2


def test_budget_deposit_retry_defer(seg, clock):
    bg = seg.budget("i/budget", floor=1, ratio=0.5)
    bg.retry()  # the floor's one-second burst
    with pytest.raises(breakerd.RetryDeferred) as ei:
        bg.retry()
    assert ei.value.cause == "deferred" and ei.value.breaker == "i/budget"
    assert 0 < ei.value.wait <= 1.0
    bg.deposit()
    bg.deposit()  # 2 x 0.5 = one retry
    bg.retry()
    with pytest.raises(breakerd.RetryDeferred):
        bg.retry()
    clock.advance(1)
    bg.retry()
    c = bg.info()["counters"]
    assert c == {"deposits": 2, "retries": 3, "retries_floor": 2, "deferred": 2}
    bg.configure(floor=0, ratio=1)
    with pytest.raises(breakerd.RetryDeferred) as ei:
        bg.retry()
    assert ei.value.wait == 0.0  # no floor: nothing to wait for


def test_segment_info(seg):
    seg.breaker("i/d")
    info = seg.info()
    assert info["shm"] == seg.shm and info["used"] == 1 and info["capacity"] == 1024
    # layout 3: the arena of 64-byte units; a breaker without extension
    # blocks takes 7 of them
    assert info["unit_bytes"] == 64 and info["record_size"] == 448
    assert info["arena_bytes"] == (1024 * 7 + 1024) * 64
    assert info["arena_used_bytes"] == (1 + 7) * 64  # unit 0 is never used
    assert seg.breaker("i/d").info()["record_bytes"] == 448
    assert info["heartbeat_age_ms"] is None and info["daemon_pid"] == 0


def test_breaker_signals_on_the_fake_clock(seg, clock):
    br = seg.breaker("i/sig", max_concurrent=2, failure_threshold=10)
    assert br.info()["signals"] == {"arrivals": 0, "completions": 0, "in_flight": 0,
                                    "oldest_in_flight_ms": 0, "max_concurrent": 2,
                                    "half_open_probes": 1, "remaining_concurrent": 2}
    first = br.acquire()
    clock.advance("300ms")
    second = br.acquire()
    with pytest.raises(breakerd.BulkheadFull):
        br.acquire()
    clock.advance("200ms")
    s = br.info()["signals"]
    assert s["oldest_in_flight_ms"] == 500  # the first permit's age
    assert s["in_flight"] == 2 and s["remaining_concurrent"] == 0
    assert s["arrivals"] == 3 and s["completions"] == 0
    first.success()
    assert br.info()["signals"]["oldest_in_flight_ms"] == 200
    second.failure("timeout")
    s = br.info()["signals"]
    assert s["oldest_in_flight_ms"] == 0 and s["in_flight"] == 0
    c = br.info()["counters"]
    assert s["arrivals"] == c["allowed"] + c["rejected_full"] == 3
    assert s["completions"] == c["successes"] + c["failures"] == 2
    assert seg.breaker("i/nobulk").info()["signals"]["remaining_concurrent"] is None


def test_budget_signals(seg):
    bg = seg.budget("i/bsig", floor=0, ratio=0.5)
    assert bg.info()["signals"] == {"first_attempts": 0, "retries": 0,
                                    "retry_share": 0.0, "tokens_left": 0.0}
    for _ in range(4):
        bg.deposit()
    bg.retry()
    s = bg.info()["signals"]
    assert s["first_attempts"] == 4 and s["retries"] == 1
    assert s["retry_share"] == pytest.approx(1 / 5)
    assert s["tokens_left"] == pytest.approx(bg.info()["balance"]) == pytest.approx(1.0)
