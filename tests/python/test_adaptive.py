"""max_concurrent="auto": the bulkhead limit learned from latency by every
process of the host (docs/design/limits.md "Adaptive concurrency"); the
rule itself is tested in C (tests/unit/test_adaptive.c). Here: the
settings and the info fields pass through the binding."""

import pytest

import breakerd


def test_auto_starts_at_the_initial_limit_and_reports_it(seg):
    br = seg.breaker("ac/a", max_concurrent="auto", min_concurrent=2)
    cfg = br.info()["config"]
    assert cfg["concurrency_auto"] is True
    assert (cfg["max_concurrent"], cfg["min_concurrent"]) == (0, 2)
    ps = [br.acquire() for _ in range(4)]
    with pytest.raises(breakerd.BulkheadFull):
        br.acquire()
    info = br.info()
    assert info["concurrency_limit"] == 4.0
    assert info["latency_baseline_us"] == 0
    assert info["signals"]["remaining_concurrent"] == 0
    for p in ps:
        p.success()


def test_auto_n_bounds_the_learned_limit(seg):
    br = seg.breaker("ac/b", max_concurrent="auto:3")
    assert br.info()["config"]["max_concurrent"] == 3
    assert br.info()["concurrency_limit"] == 3.0


def test_a_number_turns_the_learned_limit_off(seg):
    br = seg.breaker("ac/c", max_concurrent="auto")
    br.configure(max_concurrent=6)
    info = br.info()
    assert info["config"]["concurrency_auto"] is False
    assert info["concurrency_limit"] == 6.0
    assert info["latency_recent_us"] is None


def test_latency_is_learned_from_completions(seg, clock):
    br = seg.breaker("ac/d", max_concurrent="auto:8")
    for _ in range(30):
        p = br.acquire()
        clock.advance(0.01)
        p.success()
    info = br.info()
    assert info["latency_recent_us"] == 10000
    assert info["latency_baseline_us"] == 10000


@pytest.mark.parametrize("value", ["automatic", "auto:", "auto:x", 1.5])
def test_a_bad_max_concurrent_is_refused(seg, value):
    with pytest.raises((ValueError, TypeError), match="max_concurrent"):
        seg.breaker("ac/e", max_concurrent=value)


def test_min_concurrent_above_the_bound_names_the_setting(seg):
    with pytest.raises(ValueError, match="min_concurrent=5"):
        seg.breaker("ac/f", max_concurrent="auto:4", min_concurrent=5)


@pytest.mark.parametrize("value", ["auto:0", "auto:\u00b2", "auto:\u0663", "auto:+4", "auto: 4"])
def test_auto_n_takes_ascii_digits_from_1_naming_the_setting(seg, value):
    # "auto:0" was taken as "auto" (up to MAX_CONCURRENT; bctl and the
    # breakers file refuse it), "auto:٣" as auto:3 (str.isdigit() is true
    # for any Unicode digit), and "auto:²" raised int()'s message, which
    # names neither the setting nor the value
    with pytest.raises(ValueError, match="max_concurrent"):
        seg.breaker("ac/g", max_concurrent=value)
