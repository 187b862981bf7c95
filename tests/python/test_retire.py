"""Retirement from Python: Segment.retire() and Segment.retire_idle() over
brk_retire() / brk_retire_idle(), with a handle kept across it."""

import pytest


def test_retire_frees_the_name_and_a_kept_handle_starts_fresh(seg):
    br = seg.breaker("api.example.com", failure_threshold=3)
    with br:
        pass
    assert br.info()["counters"]["successes"] == 1
    assert seg.record_count() == 1
    assert seg.retire("api.example.com") is True
    assert seg.record_count() == 0
    assert [r["name"] for r in seg.records()] == []
    # the handle re-creates the record, fresh, with its own settings
    with br:
        pass
    i = br.info()
    assert i["counters"]["successes"] == 1
    assert i["config"]["failure_threshold"] == 3
    assert seg.record_count() == 1


def test_retire_keeps_a_record_in_use(seg):
    br = seg.breaker("busy", max_concurrent=2)
    p = br.acquire()
    assert seg.retire("busy") is False  # a permit is held
    p.success()
    assert seg.retire("busy") is True


def test_retire_idle_needs_the_record_watched_that_long(seg, clock):
    quiet = seg.breaker("quiet")
    active = seg.breaker("active")
    with quiet:
        pass
    assert seg.retire_idle("10s") == 0  # the first pass only notes them
    clock.advance(6)
    with active:
        pass
    assert seg.retire_idle("10s") == 0
    clock.advance(5)
    assert seg.retire_idle("10s") == 1  # quiet: 11 s unchanged
    assert [r["name"] for r in seg.records()] == ["active"]
    assert seg.retire("active", idle=3600) is False  # active 5 s ago


def test_retire_bad_input(seg):
    with pytest.raises(LookupError):
        seg.retire("nobody")
    with pytest.raises(ValueError):
        seg.retire("bad name!")
    with pytest.raises(ValueError):
        seg.retire_idle(-1)
    with pytest.raises(ValueError):
        seg.retire_idle(0)
