"""guarded() with a real APScheduler BackgroundScheduler and a real upstream."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fleet"))

from pyint_fixtures import seg, shm_name, upstream  # noqa: E402,F401


import threading
import time

import pytest
import requests
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler

import breakerd
from breakerd.integrations.apscheduler import guarded

import upstream as U


class Sleeps:
    """A real sleep that records what it was asked to sleep."""

    def __init__(self):
        self.asked = []

    def __call__(self, s):
        self.asked.append(s)
        time.sleep(s)


def test_3600s_retry_after_opens_the_breaker_and_other_jobs_run_on_time(seg, upstream):
    br = seg.breaker("sched/crm", failure_threshold=5, max_wait="2s", max_open="2h")
    upstream.set(U.rate_limited(3600))
    plain = requests.Session()          # the wrapper holds the permit itself
    sleeps = Sleeps()

    @guarded(br, max_wait="1s", sleep=sleeps)
    def sync_job():
        return plain.get(upstream.url + "/sync", timeout=5)

    ticks = []
    lock = threading.Lock()

    def ticker():
        with lock:
            ticks.append(time.monotonic())

    # ONE pool thread: a guarded run that slept out the Retry-After would
    # stop every other job of the scheduler.
    sched = BackgroundScheduler(executors={"default": ThreadPoolExecutor(1)},
                                job_defaults={"coalesce": False, "max_instances": 1,
                                              "misfire_grace_time": 5})
    sched.add_job(sync_job, "interval", seconds=0.2, id="sync")
    sched.add_job(ticker, "interval", seconds=0.1, id="tick")
    t0 = time.monotonic()
    sched.start()
    try:
        time.sleep(2.5)
    finally:
        sched.shutdown(wait=True)
    t1 = time.monotonic()

    assert len(upstream.requests) == 1          # one 429, then refused before sending
    assert br.state == "open"
    info = br.info()
    assert info["open_remaining_ms"] > 3500 * 1000
    assert sync_job.stats["ran"] == 1
    assert sync_job.stats["skipped"] >= 8
    assert all(s <= 1.0 for s in sleeps.asked)
    assert sleeps.asked == []                   # an open breaker is never slept on
    # the ticker kept its 100 ms schedule the whole time: no gap near the
    # 1 s a max_wait sleep would cost (let alone 3600 s), generous for a
    # loaded machine
    with lock:
        ts = list(ticks)
    assert len(ts) >= 0.7 * (t1 - t0) / 0.1
    gaps = [b - a for a, b in zip(ts, ts[1:])]
    assert max(gaps) < 0.8, max(gaps)


def test_short_cooling_is_slept_once_then_the_job_runs(seg, upstream):
    br = seg.breaker("sched/short", max_wait="30s", implicit_pace=False)  # a 429 stays a failure (the implicit pace off)
    seen = []

    def policy(rec):
        seen.append(rec["t"])
        return (429, {"Retry-After": "1"}) if len(seen) == 1 else (200, {})

    upstream.set(policy)
    plain = requests.Session()
    sleeps = Sleeps()

    @guarded(br, max_wait=2.0, sleep=sleeps)
    def job():
        return plain.get(upstream.url, timeout=5)

    assert job().status_code == 429
    r = job()                                   # cooling ~1 s <= 2 s: sleep, run
    assert r is not None and r.status_code == 200
    assert len(sleeps.asked) == 1 and 0.5 < sleeps.asked[0] <= 1.25 + 0.01
    assert seen[1] - seen[0] >= 0.5
    assert job.stats == {"ran": 2, "skipped": 0, "slept": pytest.approx(sleeps.asked[0])}
    assert br.state == "closed"


def test_cooling_longer_than_max_wait_skips_without_sleeping(seg, upstream):
    br = seg.breaker("sched/long", max_wait="60s", implicit_pace=False)  # a 429 stays a failure (the implicit pace off)
    upstream.set(U.rate_limited(20))
    plain = requests.Session()
    sleeps = Sleeps()
    skipped = []

    @guarded(br, max_wait="1s", sleep=sleeps, on_skip=skipped.append)
    def job():
        return plain.get(upstream.url, timeout=5)

    job()
    t = time.monotonic()
    assert job() is None
    assert time.monotonic() - t < 0.5
    assert sleeps.asked == []
    assert len(skipped) == 1 and isinstance(skipped[0], breakerd.Cooling)
    assert skipped[0].wait > 15
    assert len(upstream.requests) == 1


def test_job_exception_counts_as_failure_and_is_re_raised(seg):
    br = seg.breaker("sched/exc", failure_threshold=2, open="30s")

    @guarded(br)
    def job():
        raise ConnectionError("upstream down")

    for _ in range(2):
        with pytest.raises(ConnectionError):
            job()
    assert br.state == "open"
    assert job() is None                          # refused: skipped, not raised
    assert job.stats["skipped"] == 1
    c = br.info()["counters"]
    assert c["failures"] == 2


def test_without_breaker_a_refusal_inside_skips_the_run(seg):
    br = seg.breaker("sched/inner", open="30s")
    br.trip(for_="30s")
    calls = []

    @guarded(None, max_wait=1)
    def job():
        calls.append(1)
        with br:
            pass

    assert job() is None
    assert calls == [1]
    assert job.stats["skipped"] == 1


def test_max_wait_must_be_a_duration():
    with pytest.raises(ValueError):
        guarded(None, max_wait="soon")
    with pytest.raises(ValueError):
        guarded(None, max_wait=-1)


def test_coroutine_job_is_awaited_under_the_breaker(seg):
    import asyncio
    br = seg.breaker("sched/async", failure_threshold=2, open="30s", max_wait="30s",
                     implicit_pace=False)  # a 429 stays a failure (the implicit pace off)
    slept = []

    class Resp:
        status_code = 429
        headers = {"Retry-After": "1"}

    async def asleep(s):
        slept.append(s)

    @guarded(br, max_wait=5, asleep=asleep)
    async def job():
        await asyncio.sleep(0)
        return Resp()

    assert asyncio.iscoroutinefunction(job)
    r = asyncio.run(job())
    assert r.status_code == 429
    c = br.info()["counters"]
    assert c["failures_by_reason"]["rate_limited"] == 1   # awaited, then reported
    # cooling ~1 s <= 5 s: "slept" once (the fake sleep returns at once, so
    # the second try is still cooling and the run is skipped)
    assert asyncio.run(job()) is None
    assert len(slept) == 1 and 0.5 < slept[0] <= 1.3
    assert job.stats["ran"] == 1 and job.stats["skipped"] == 1


def test_coroutine_job_with_an_asyncio_scheduler_skips_while_open(seg):
    import asyncio
    from apscheduler.schedulers.asyncio import AsyncIOScheduler
    br = seg.breaker("sched/async2", open="30s")
    br.trip(for_="30s")
    calls = []

    @guarded(br, max_wait=1)
    async def job():
        calls.append(1)

    async def main():
        sched = AsyncIOScheduler()
        sched.add_job(job, "interval", seconds=0.05)
        sched.start()
        await asyncio.sleep(0.4)
        sched.shutdown(wait=False)

    asyncio.run(main())
    assert calls == []
    assert job.stats["skipped"] >= 3
