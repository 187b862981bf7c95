"""The C hot paths (_core.Guard): `with br:` keeps each block's own permit
per context (thread, asyncio task) and per frame (generators), reuses
permit objects only when nobody else holds them, and br.call() reports
every path."""

import asyncio
import contextlib
import functools
import gc
import sys
import threading

import pytest

import breakerd
from breakerd import _breaker


def counts(br, *keys):
    c = br.info()["counters"]
    return tuple(c[k] for k in keys)


# ---- with: which permit a block leaves with --------------------------------

def test_generator_suspended_inside_with_leaves_with_its_own_permit(seg):
    br = seg.breaker("w/gen", max_concurrent=4)

    def gen():
        with br as p:
            yield p
            yield p

    g = gen()
    gp = next(g)
    with br as mine:
        assert next(g) is gp
        for _ in g:  # the generator leaves its block while ours is open
            pass
        assert gp.released and gp.counted
        assert not mine.released
    assert mine.released
    assert br.info()["in_flight"] == 0
    assert counts(br, "successes") == (2,)


def test_interleaved_generators_each_leave_with_their_own(seg):
    br = seg.breaker("w/gen2", max_concurrent=4)

    def gen(fail):
        with br as p:
            yield p
            if fail:
                raise TimeoutError

    g1, g2 = gen(True), gen(False)
    p1, p2 = next(g1), next(g2)
    with pytest.raises(TimeoutError):
        next(g1)  # the first one entered leaves first, with a failure
    assert p1.released and not p2.released
    assert counts(br, "failures", "successes") == (1, 0)
    next(g2, None)
    assert p2.released and counts(br, "failures", "successes") == (1, 1)


def test_sync_with_across_await_in_interleaved_tasks(seg):
    br = seg.breaker("w/tasks", max_concurrent=4, failure_threshold=100)

    async def task(name, entered, leave, fail, out):
        with br as p:
            out[name] = p
            entered.set()
            await leave.wait()
            if fail:
                raise TimeoutError
        assert p.released

    async def scenario():
        ea, eb, la, lb = (asyncio.Event() for _ in range(4))
        out = {}
        a = asyncio.create_task(task("a", ea, la, True, out))
        b = asyncio.create_task(task("b", eb, lb, False, out))
        await ea.wait()
        await eb.wait()
        la.set()  # a entered first and leaves first, b stays inside
        with pytest.raises(TimeoutError):
            await a
        assert out["a"].released and not out["b"].released
        assert counts(br, "failures", "successes") == (1, 0)
        lb.set()
        await b
        assert out["b"].released

    asyncio.run(scenario())
    assert counts(br, "failures", "successes") == (1, 1)
    assert br.info()["in_flight"] == 0


def test_async_with_in_interleaved_tasks(seg):
    br = seg.breaker("w/atasks", max_concurrent=8, failure_threshold=100)
    order = []

    async def task(i, gate):
        async with br as p:
            await gate.wait()
            order.append(i)
            if i % 2:
                raise ConnectionError
        assert p.released and p.counted
        return p

    async def scenario():
        gates = [asyncio.Event() for _ in range(6)]
        ts = [asyncio.create_task(task(i, gates[i])) for i in range(6)]
        await asyncio.sleep(0)
        assert br.info()["in_flight"] == 6
        for i in (4, 1, 5, 0, 3, 2):  # leave in an order unlike the entering
            gates[i].set()
            await asyncio.sleep(0)
            await asyncio.sleep(0)
        return await asyncio.gather(*ts, return_exceptions=True)

    res = asyncio.run(scenario())
    assert order == [4, 1, 5, 0, 3, 2]
    assert [isinstance(r, ConnectionError) for r in res] == [i % 2 == 1 for i in range(6)]
    assert counts(br, "failures", "successes") == (3, 3)
    assert br.info()["in_flight"] == 0


def test_task_made_inside_with_keeps_its_own_blocks(seg):
    br = seg.breaker("w/child", max_concurrent=4)

    async def child():
        with br as q:
            await asyncio.sleep(0)
        return q

    async def scenario():
        with br as p:
            q = await asyncio.create_task(child())  # copies our context
            assert q.released and not p.released
            assert [x[1] for x in _breaker._active()] == [p]
        assert p.released

    asyncio.run(scenario())
    assert counts(br, "successes") == (2,)


def test_threads_interleaving_inside_with(realseg):
    br = realseg.breaker("w/threads", max_concurrent=16, failure_threshold=10**6)
    start = threading.Barrier(8)
    errors = []

    def work(i):
        try:
            start.wait()
            for n in range(300):
                with br as p:
                    if n % 10 == 0:
                        threading.Event().wait(0.0005)  # let the others in
                    assert _breaker._active() == [(br, p)]
                assert p.released
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    assert counts(br, "successes", "cancelled") == (2400, 0)
    assert br.info()["in_flight"] == 0


def test_exit_stack_enters_and_leaves_from_other_frames(seg):
    br = seg.breaker("w/stack", max_concurrent=16)
    with contextlib.ExitStack() as st:
        ps = [st.enter_context(br) for _ in range(10)]  # deeper than the inline stack
        assert br.info()["in_flight"] == 10
        assert [x[1] for x in _breaker._active()] == ps
    assert all(p.released and p.counted for p in ps)

    async def scenario():
        async with contextlib.AsyncExitStack() as st:
            p = await st.enter_async_context(br)
        return p

    assert asyncio.run(scenario()).released
    assert br.info()["in_flight"] == 0 and _breaker._active() == []


def test_leaving_a_block_never_entered_is_an_error(seg):
    br = seg.breaker("w/none")
    with pytest.raises(RuntimeError, match="did not enter"):
        br.__exit__(None, None, None)
    with br as p:
        out = []
        t = threading.Thread(target=lambda: out.append(
            pytest.raises(RuntimeError, br.__exit__, None, None, None)))
        t.start()
        t.join()
        assert out and not p.released  # another thread cannot leave our block
    assert p.released


# ---- with: permit objects ----------------------------------------------------

def test_permit_kept_by_as_is_never_reused(seg):
    br = seg.breaker("w/as")
    with br as p:
        pass
    with br as q:
        assert q is not p
        assert not q.released
    assert p.released and p.counted and q.counted


def test_reused_permits_hold_no_reference(seg):
    br = seg.breaker("w/refs")
    core = br._b
    with br:
        pass
    before = sys.getrefcount(core)
    for _ in range(5):
        with br:
            pass
    gc.collect()
    assert sys.getrefcount(core) == before
    assert _breaker._active() == []


def test_with_on_a_closed_segment(shm, clock):
    s = breakerd.attach(shm, clock=clock)
    br = s.breaker("w/closed")
    with pytest.raises(ValueError, match="closed"), pytest.warns(ResourceWarning):
        with br:  # its permit cannot be released any more: dropped with a warning
            s.close()
    with pytest.raises(ValueError, match="closed"):
        with br:
            pass


# ---- br.call() ---------------------------------------------------------------

class Adder:
    def __call__(self, a, b=0):
        return a + b

    def add(self, a, b=0):
        return a + b


def test_call_runs_every_kind_of_callable(seg):
    br = seg.breaker("w/call")

    def f(a, b=0):
        return a + b

    assert br.call(f, 1, b=2) == 3
    assert br.call(len, [1, 2]) == 2                  # builtin
    assert br.call(Adder().add, 1, 2) == 3            # bound method
    assert br.call(Adder(), 1, b=5) == 6              # callable object
    assert br.call(functools.partial(f, 1), b=3) == 4  # partial
    assert br.call(str.upper, "a") == "A"             # method descriptor
    assert counts(br, "successes") == (6,)
    assert br.info()["in_flight"] == 0


def test_call_of_generator_function_guards_iteration_and_refuses_non_callables(seg):
    # issue 24: a generator function is guarded from its first next() to
    # its end (it used to raise TypeError)
    br = seg.breaker("w/callgen")

    def gen():
        yield 1

    g = br.call(gen)
    assert counts(br, "allowed") == (0,)  # nothing runs before next()
    assert list(g) == [1]
    assert counts(br, "allowed", "successes") == (1, 1)
    with pytest.raises(TypeError, match="callable"):
        br.call(42)
    with pytest.raises(TypeError):
        br.call()
    assert counts(br, "allowed") == (1,)


def test_call_of_a_coroutine_function_returns_the_coroutine(seg):
    br = seg.breaker("w/callcoro")

    async def co(x):
        await asyncio.sleep(0)
        return x

    c = br.call(co, 7)
    assert asyncio.iscoroutine(c)
    assert br.info()["in_flight"] == 0  # admitted only when awaited
    assert asyncio.run(c) == 7
    assert counts(br, "successes") == (1,)


def test_call_classifies_exceptions(seg):
    br = seg.breaker("w/callexc", failure_threshold=100, exclude=(LookupError,))

    def boom(exc):
        raise exc

    for exc in (TimeoutError(), ConnectionError(), OSError(), KeyError("k"),
                KeyboardInterrupt()):
        with pytest.raises(type(exc)) as ei:
            br.call(boom, exc)
        assert ei.value is exc and ei.value.__traceback__ is not None
    c = br.info()["counters"]
    assert c["failures"] == 3 and c["healthy_errors"] == 1 and c["cancelled"] == 1
    assert c["failures_by_reason"]["timeout"] == 1
    assert c["failures_by_reason"]["connect"] == 1
    assert br.info()["in_flight"] == 0


def test_call_with_a_raising_classifier_releases_once(seg):
    def broken(exc):
        raise LookupError("classifier bug")

    br = seg.breaker("w/callcls", max_concurrent=1, ignore=broken)

    def boom():
        raise ValueError("the call's own error")

    with pytest.raises(LookupError) as ei:
        br.call(boom)
    assert isinstance(ei.value.__context__, ValueError)
    assert counts(br, "cancelled", "failures", "successes") == (1, 0, 0)
    assert br.info()["in_flight"] == 0


def test_call_refused_runs_nothing(seg):
    br = seg.breaker("w/callopen")
    br.trip(for_=60)
    ran = []
    with pytest.raises(breakerd.CircuitOpen) as ei:
        br.call(ran.append, 1)
    assert ran == [] and ei.value.breaker == "w/callopen"


def test_call_on_a_segment_closed_by_the_call(shm, clock):
    s = breakerd.attach(shm, clock=clock)
    br = s.breaker("w/callclose")
    with pytest.raises(ValueError, match="closed"):
        br.call(s.close)
    with pytest.raises(ValueError, match="closed"):
        br.call(len, "")


def test_decorated_function_keeps_its_identity(seg):
    br = seg.breaker("w/deco")

    class K:
        @br
        def m(self, x):
            """doc"""
            return (self, x)

    k = K()
    assert k.m(1) == (k, 1)
    assert K.m.__name__ == "m" and K.m.__doc__ == "doc"
    assert K.m.__wrapped__(k, 2) == (k, 2)
    assert counts(br, "successes") == (1,)


# ---- acquire() and success() (C) ----------------------------------------------

def test_acquire_and_success_with_and_without_arguments(seg, clock):
    br = seg.breaker("w/acq")
    p = br.acquire()
    assert isinstance(p, breakerd.Permit) and p.breaker == "w/acq"
    assert p.success() is True and p.success() is False
    q = br.acquire()
    assert q.success(retry_after="250ms") is True  # the Python path: cools everyone
    with pytest.raises(breakerd.Cooling):
        br.acquire()
    clock.advance("1s")
    r = br.acquire()
    with pytest.raises(ValueError):
        r.success(retry_after="soon")
    assert not r.released and r.success(None) is True
    assert counts(br, "successes") == (3,)
    br.trip(for_=60)
    with pytest.raises(breakerd.CircuitOpen):
        br.acquire()
