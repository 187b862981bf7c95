"""A permit is released exactly once on every path."""

import gc
import warnings

import pytest

import breakerd


def c(br, *keys):
    cs = br.info()["counters"]
    return tuple(cs[k] for k in keys)


def test_with_left_by_exception_releases_once(seg):
    br = seg.breaker("p/a", max_concurrent=1, failure_threshold=100)
    for _ in range(3):
        with pytest.raises(ValueError):
            with br:
                raise ValueError
        assert br.info()["in_flight"] == 0
    assert c(br, "allowed", "failures", "stale") == (3, 3, 0)


def test_report_inside_with_is_not_repeated(seg):
    br = seg.breaker("p/b")
    with br as p:
        assert p.healthy_error() is True
    with pytest.raises(RuntimeError):
        with br as p:
            p.success()
            raise RuntimeError  # already reported: not counted again
    assert c(br, "allowed", "successes", "healthy_errors", "failures") == (2, 1, 1, 0)


def test_second_report_is_a_no_op_returning_false(seg):
    br = seg.breaker("p/c")
    p = br.acquire()
    assert p.counted is None and not p.released
    assert p.failure("timeout") is True
    assert p.counted is True and p.released
    assert p.success() is False
    assert p.cancel() is False
    assert p.counted is True
    assert c(br, "failures", "successes", "stale") == (1, 0, 0)


def test_permit_of_an_older_generation_is_not_counted(seg):
    br = seg.breaker("p/d")
    p = br.acquire()
    br.reset()
    assert p.failure() is False
    assert p.counted is False
    assert c(br, "failures", "stale") == (0, 1)


def test_garbage_collected_permit_is_cancelled_with_a_warning(seg):
    br = seg.breaker("p/e", max_concurrent=1)
    p = br.acquire()
    assert br.info()["in_flight"] == 1
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        del p
        gc.collect()
    assert [x.category for x in w] == [ResourceWarning]
    assert "p/e" in str(w[0].message)
    assert br.info()["in_flight"] == 0
    assert c(br, "cancelled", "successes", "failures") == (1, 0, 0)
    br.acquire().success()  # the slot is free again


def test_reported_permit_collects_silently(seg):
    br = seg.breaker("p/f")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = br.acquire()
        p.success()
        del p
        gc.collect()
        with br:
            pass
    assert c(br, "cancelled") == (0,)


def test_refusal_leaves_no_permit(seg):
    br = seg.breaker("p/g", max_concurrent=1)
    p = br.acquire()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ResourceWarning from a refusal
        for _ in range(3):
            with pytest.raises(breakerd.BulkheadFull):
                with br:
                    pass
        gc.collect()
    p.success()
    assert c(br, "allowed", "rejected_full", "cancelled") == (1, 3, 0)


def test_closed_segment_refuses_calls(shm, clock):
    s = breakerd.attach(shm, clock=clock)
    br = s.breaker("p/h")
    p = br.acquire()
    s.close()
    assert s.closed
    with pytest.raises(ValueError, match="closed"):
        br.acquire()
    with pytest.raises(ValueError, match="closed"):
        p.success()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        del p
        gc.collect()
    assert [x.category for x in w] == [ResourceWarning]


def test_segment_context_manager(shm):
    with breakerd.attach(shm) as s:
        s.breaker("p/i")
    assert s.closed


def test_a_raising_classifier_still_releases_once(seg):
    def broken(exc):
        raise LookupError("classifier bug")

    br = seg.breaker("p/j", max_concurrent=1, exclude=broken)
    with pytest.raises(LookupError) as ei:
        with br:
            raise ValueError("the call's own error")
    assert isinstance(ei.value.__context__, ValueError)
    assert br.info()["in_flight"] == 0
    assert c(br, "cancelled", "failures", "successes") == (1, 0, 0)
    with br:  # the bulkhead slot is free
        pass
