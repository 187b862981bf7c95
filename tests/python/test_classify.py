"""Exception classification, decorators, async with, HTTP classification."""

import asyncio

import pytest

import breakerd


class NotFound(Exception):
    pass


class BadAuth(Exception):
    pass


def counters(br):
    c = br.info()["counters"]
    return {k: c[k] for k in ("successes", "failures", "healthy_errors", "ignored",
                              "cancelled")}


def raise_in(br, exc):
    with pytest.raises(type(exc)):
        with br:
            raise exc


def test_default_every_exception_is_a_failure_with_a_reason(seg):
    br = seg.breaker("c/a", failure_threshold=100)
    raise_in(br, TimeoutError())
    raise_in(br, ConnectionRefusedError())
    raise_in(br, RuntimeError())
    c = br.info()["counters"]
    assert c["failures"] == 3
    assert c["failures_by_reason"]["timeout"] == 1
    assert c["failures_by_reason"]["connect"] == 1
    assert c["failures_by_reason"]["other"] == 1


def test_exclude_and_ignore_by_class_and_callable(seg):
    br = seg.breaker("c/b", failure_threshold=100,
                     exclude=(NotFound, lambda e: isinstance(e, KeyError)),
                     ignore=lambda e: isinstance(e, BadAuth))
    raise_in(br, NotFound())
    raise_in(br, KeyError("k"))
    raise_in(br, BadAuth())
    raise_in(br, OSError())
    assert counters(br) == {"successes": 0, "failures": 1, "healthy_errors": 2,
                            "ignored": 1, "cancelled": 0}


def test_failure_list_limits_what_counts(seg):
    br = seg.breaker("c/c", failure=(OSError,), failure_threshold=100)
    raise_in(br, ValueError())   # not the upstream's fault: healthy error
    raise_in(br, OSError())
    assert counters(br)["failures"] == 1 and counters(br)["healthy_errors"] == 1


def test_local_give_up_is_cancelled(seg):
    br = seg.breaker("c/d")
    other = seg.breaker("c/other")
    other.trip(for_=60)
    raise_in(br, KeyboardInterrupt())
    with pytest.raises(breakerd.CircuitOpen):
        with br:
            with other:  # refused inside br's block
                pass
    assert counters(br)["cancelled"] == 2 and counters(br)["failures"] == 0


def test_decorator_on_functions(seg):
    br = seg.breaker("c/e", failure_threshold=2)

    @br
    def f(x, y=1):
        """doc"""
        if x < 0:
            raise ConnectionError
        return x + y

    assert f.__name__ == "f" and f.__doc__ == "doc"
    assert f(1, y=2) == 3
    assert br.call(lambda x: x + 1, 4) == 5
    for _ in range(2):
        with pytest.raises(ConnectionError):
            f(-1)
    with pytest.raises(breakerd.CircuitOpen):
        f(1)
    c = br.info()["counters"]
    assert c["successes"] == 2 and c["failures"] == 2 and c["rejected_open"] == 1


def test_decorator_and_async_with_on_coroutines(seg):
    br = seg.breaker("c/f", failure_threshold=2)

    @br
    async def g(x):
        await asyncio.sleep(0)
        if x < 0:
            raise TimeoutError
        return x

    async def scenario():
        assert await g(1) == 1
        async def plain(x):
            return x

        assert await br.call(plain, 2) == 2
        async with br as p:
            assert isinstance(p, breakerd.Permit)
        # concurrent tasks: each `async with` keeps its own permit
        results = await asyncio.gather(*(g(i) for i in range(10)))
        assert results == list(range(10))
        for _ in range(2):
            with pytest.raises(TimeoutError):
                await g(-1)
        with pytest.raises(breakerd.CircuitOpen):
            async with br:
                pass

    asyncio.run(scenario())
    c = br.info()["counters"]
    assert c["successes"] == 13 and c["failures"] == 2
    assert c["failures_by_reason"]["timeout"] == 2
    assert br.info()["in_flight"] == 0


def test_nested_with_of_one_breaker(seg):
    br = seg.breaker("c/g", max_concurrent=2)
    with br as outer:
        with br as inner:
            assert inner is not outer
            assert br.info()["in_flight"] == 2
        assert inner.released and not outer.released
    assert outer.released and br.info()["in_flight"] == 0


@pytest.mark.parametrize("status,expect", [
    (200, ("success", "none", None)),
    (302, ("success", "none", None)),
    (404, ("healthy_error", "none", None)),
    (401, ("rejected_request", "none", None)),
    (408, ("failure", "timeout", None)),
    (429, ("failure", "rate_limited", None)),
    (500, ("failure", "server_error", None)),
    (503, ("failure", "overloaded", None)),
    (529, ("failure", "overloaded", None)),
    (504, ("failure", "timeout", None)),
    (700, ("failure", "other", None)),
])
def test_classify_http(status, expect):
    assert breakerd.classify_http(status) == expect


def test_classify_http_retry_after():
    assert breakerd.classify_http(429, "7") == ("failure", "rate_limited", 7.0)
    o, r, s = breakerd.classify_http(503, "Wed, 21 Oct 2015 07:28:00 GMT")
    assert (o, r) == ("failure", "overloaded")  # a date in the past: no wait
    assert s is None
    assert breakerd.classify_http(200, "30") == ("success", "none", None)  # kept for failures only
    with pytest.raises(ValueError):
        breakerd.classify_http(99)
    with pytest.raises(ValueError):
        breakerd.classify_http(1000)
    with pytest.raises(TypeError):
        breakerd.classify_http("200")


def test_report_http(seg):
    br = seg.breaker("c/h", failure_threshold=2, max_wait="1m", implicit_pace=False)
    assert br.acquire().report_http(200) is True
    br.acquire().report_http(404)
    br.acquire().report_http(403)
    br.acquire().report_http(500)
    c = br.info()["counters"]
    assert (c["successes"], c["healthy_errors"], c["ignored"], c["failures"]) == (1, 1, 1, 1)
    br.acquire().report_http(503, headers={"rEtRy-AfTeR": "5"})  # case-insensitive
    assert br.state == "open" and br.info()["counters"]["failures"] == 2
    assert br.info()["counters"]["failures_by_reason"]["overloaded"] == 1
    br.reset()
    br.acquire().report_http(429, headers={"Retry-After": "5"}, body=b"slow down")
    assert br.info()["cool_until_remaining_ms"] == 5000


def test_decorating_a_generator_function_guards_its_iteration(seg):
    # issue 24: @br on a (async) generator function guards the iteration
    # (it used to raise TypeError); non-callables are still refused
    br = seg.breaker("c/gen")

    def gen():
        yield 1

    async def agen():
        yield 1

    async def drain():
        return [x async for x in br(agen)()]

    g = br(gen)
    assert br.info()["counters"]["allowed"] == 0
    assert list(g()) == [1]
    assert asyncio.run(drain()) == [1]
    with pytest.raises(TypeError):
        br(42)
    assert br.info()["counters"]["allowed"] == 2
    assert br.info()["counters"]["successes"] == 2
