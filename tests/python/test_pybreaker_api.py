"""The core API fixes pybreaker's API needs (issue 24, scope 3): the failure
streak that survives the trip, half_open(), raise_on_trip, cheap counter
reads, created, configure(open=) raising max_open, trip(restart=True),
Refused("message"), @br on generator functions, a per-name event cursor.
Fake clock: nothing sleeps."""

import pickle

import pytest

import breakerd


class Boom(Exception):
    pass


def fail(br, n=1):
    for _ in range(n):
        with pytest.raises(Boom):
            with br:
                raise Boom()


def test_failure_streak_survives_the_trip_and_counts_failed_probe(seg, clock):
    br = seg.breaker("pyb/streak", failure_threshold=3, open="1s")
    fail(br, 2)
    assert br.failure_streak == 2
    fail(br, 1)
    assert br.state == "open"
    assert br.failure_streak == 3
    info = br.info()
    assert info["consecutive_failures"] == 0  # the generation's count
    assert info["failure_streak"] == 3
    clock.advance(1.0)
    fail(br, 1)  # the probe
    assert br.state == "open"
    assert br.failure_streak == 4
    clock.advance(2.0)
    with br:
        pass
    assert br.state == "closed"
    assert br.failure_streak == 0


def test_half_open_forced_then_probe_closes(seg):
    br = seg.breaker("pyb/ho", success_threshold=2)
    assert br.half_open() is True
    assert br.state == "half_open"
    assert br.half_open() is False
    with br:
        pass
    assert br.half_open_successes == 1
    with br:
        pass
    assert br.state == "closed"
    evs, _ = br.events()
    assert [e["reason"] for e in evs][:1] == ["half_open"]


def test_raise_on_trip_raises_circuit_open_from_the_tripping_call(seg):
    br = seg.breaker("pyb/rot", failure_threshold=2, raise_on_trip=True)
    fail(br, 1)
    with pytest.raises(breakerd.CircuitOpen) as ei:
        with br:
            raise Boom()
    assert isinstance(ei.value.__context__, Boom)
    assert ei.value.wait > 0
    assert br.state == "open"
    # the same through call()
    br2 = seg.breaker("pyb/rot2", failure_threshold=1, raise_on_trip=True)

    def boom():
        raise Boom()

    with pytest.raises(breakerd.CircuitOpen):
        br2.call(boom)
    # default: the call's own exception
    br3 = seg.breaker("pyb/rot3", failure_threshold=1)
    fail(br3, 1)
    assert br3.state == "open"


def test_counts_are_the_cheap_words(seg):
    br = seg.breaker("pyb/counts", failure_threshold=5)
    fail(br, 2)
    c = br.counts()
    assert c["state"] == "closed"
    assert c["consecutive_failures"] == 2
    assert c["failure_streak"] == 2
    assert c["generation"] == br.info()["generation"]


def test_breaker_reports_whether_it_created_the_record(seg):
    assert seg.breaker("pyb/made").created is True
    assert seg.breaker("pyb/made").created is False


def test_configure_open_above_max_open_raises_max_open(seg):
    br = seg.breaker("pyb/cfg", open="10s", max_open="60s")
    br.configure(open="5m")
    cfg = br.info()["config"]
    assert cfg["open_ms"] == 300000 and cfg["max_open_ms"] == 300000
    # named: still checked
    with pytest.raises(ValueError, match="max_open"):
        br.configure(open="10m", max_open="1m")


def test_trip_restart_restarts_an_open_period(seg, clock):
    br = seg.breaker("pyb/restart")
    assert br.trip(for_=10) is True
    clock.advance(6.0)
    assert br.trip(for_=10) is False
    assert br.info()["open_remaining_ms"] == 4000
    assert br.trip(for_=10, restart=True) is True
    assert br.info()["open_remaining_ms"] == 10000


def test_refused_constructible_with_a_message():
    e = breakerd.Refused("upstream is down")
    assert str(e) == "upstream is down"
    assert e.wait == 0.0 and e.cause == "open"
    e2 = pickle.loads(pickle.dumps(breakerd.CircuitOpen("x")))
    assert str(e2) == "x" and type(e2) is breakerd.CircuitOpen


def test_decorated_generator_function_guarded_over_its_iteration(seg):
    br = seg.breaker("pyb/gen", failure_threshold=5)

    @br
    def ok(v):
        x = yield v
        yield x

    @br
    def bad(v):
        yield v
        raise Boom()

    g = ok(1)
    assert next(g) == 1
    assert g.send(2) == 2
    with pytest.raises(StopIteration):
        next(g)
    assert br.info()["counters"]["successes"] == 1
    with pytest.raises(Boom):
        list(bad(1))
    assert br.failure_streak == 1
    assert ok.__name__ == "ok"


def test_per_name_event_cursor(seg):
    a = seg.breaker("pyb/ev/a")
    b = seg.breaker("pyb/ev/b")
    a.trip(for_=1)
    b.trip(for_=1)
    evs, _ = a.events()
    assert [e["name"] for e in evs] == ["pyb/ev/a"]
    assert a.events()[0] == []  # its own cursor moved on
    a.reset()
    assert [e["reason"] for e in a.events()[0]] == ["reset"]
    assert [e["name"] for e in b.events()[0]] == ["pyb/ev/b"]
