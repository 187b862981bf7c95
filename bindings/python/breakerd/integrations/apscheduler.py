"""APScheduler: a job wrapper that never sleeps longer than ``max_wait``.

A scheduler runs many jobs on a small thread pool. A job that honours an
upstream's ``Retry-After: 3600`` by sleeping holds a pool thread (and its
own next runs, ``max_instances``) for an hour. ``guarded`` instead::

    from breakerd.integrations.apscheduler import guarded

    @guarded(seg.breaker("crm/api", max_wait="30s"), max_wait="30s")
    def sync_contacts():
        return session.get(url)       # a Response: reported with report_http

    sched.add_job(sync_contacts, "interval", seconds=60)

Per run:

- the wrapper takes a permit of ``br`` (when ``br`` is a breaker). Refused:
  if the refusal is a cooling wait of at most ``max_wait`` seconds, it sleeps
  that wait once and tries again; otherwise (open, probes busy, a longer
  wait, the second refusal) the run is skipped: the job function is not
  called, nothing is sent, ``wrapper.stats["skipped"]`` grows and the
  wrapper returns None at once. The next scheduled run asks again;
- the job's return value is reported: a response (``status_code``,
  ``headers``) with ``Permit.report_http`` -- so a 429 with a Retry-After
  cools every process for up to the breaker's own ``max_wait`` (its
  ``max_wait_ms``), and a longer Retry-After (3600 s) *opens* the breaker for
  that long (the library's rule); anything else returned is a success;
  an exception is classified by the breaker's ``failure``/``exclude``/
  ``ignore`` settings (as ``with br:``) and re-raised for APScheduler to log;
- with ``br=None`` the wrapper takes no permit: the job makes its own
  guarded calls (e.g. through ``BreakerAdapter``) and a
  :class:`breakerd.Refused` it raises is handled as above (short cooling:
  sleep and run again once; otherwise the run is skipped, not an error).

The wrapper never sleeps more than ``max_wait`` in one run (default 5 s,
seconds or a duration string). Give the breaker ``max_wait`` no larger than
the wrapper's so that a Retry-After longer than what the job may sleep opens
the breaker instead of cooling it.

Thread-safety: a wrapper may run in many pool threads at once; ``stats`` is
updated under a lock (``ran``, ``skipped``, ``slept`` seconds).
"""

import asyncio
import functools
import inspect
import threading
import time

import breakerd

__all__ = ["guarded", "DEFAULT_MAX_WAIT"]

#: seconds a guarded run may sleep out a cooling wait, by default
DEFAULT_MAX_WAIT = 5.0


def _seconds(value, what):
    if isinstance(value, str):
        return breakerd.parse_duration(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    raise ValueError("%s: seconds >= 0 or a duration string, not %r" % (what, value))


def _is_response(obj):
    return hasattr(obj, "status_code") and hasattr(obj, "headers")


def guarded(br=None, max_wait=DEFAULT_MAX_WAIT, *, sleep=time.sleep, asleep=None,
            on_skip=None):
    """Decorate an APScheduler job function (see the module doc).

    ``br``: a breaker, or None (the job guards its own calls).
    ``max_wait``: the longest sleep of one run, seconds or duration string.
    ``sleep``: the sleep function (tests pass a recording one); for a
    coroutine job (AsyncIOScheduler) ``asleep`` (default ``asyncio.sleep``)
    is awaited instead and the job runs under ``async with br``.
    ``on_skip``: called as ``on_skip(refusal)`` when a run is skipped.
    """
    limit = _seconds(max_wait, "max_wait")

    def decorate(fn):
        lock = threading.Lock()
        stats = {"ran": 0, "skipped": 0, "slept": 0.0}

        def count(key, n=1):
            with lock:
                stats[key] += n

        def skip(refusal):
            count("skipped")
            if on_skip is not None:
                on_skip(refusal)
            return None

        def run_once(args, kwargs):
            if br is None:
                count("ran")
                return fn(*args, **kwargs)
            # `with br as permit:` raises the refusal before the job runs;
            # an exception is counted by the breaker's own failure/exclude/
            # ignore rules; a returned response is reported here, which
            # leaves nothing for the block's exit to report.
            with br as permit:
                count("ran")
                result = fn(*args, **kwargs)
                if _is_response(result):
                    permit.report_http(int(result.status_code), result.headers)
            return result

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return run_once(args, kwargs)
            except breakerd.Cooling as refusal:
                wait = float(refusal.wait)
                if wait > limit:
                    return skip(refusal)
                sleep(wait)
                count("slept", wait)
            except breakerd.Refused as refusal:
                return skip(refusal)
            try:
                return run_once(args, kwargs)
            except breakerd.Refused as refusal:
                return skip(refusal)

        async def run_once_async(args, kwargs):
            if br is None:
                count("ran")
                return await fn(*args, **kwargs)
            async with br as permit:
                count("ran")
                result = await fn(*args, **kwargs)
                if _is_response(result):
                    permit.report_http(int(result.status_code), result.headers)
            return result

        @functools.wraps(fn)
        async def wrapper_async(*args, **kwargs):
            try:
                return await run_once_async(args, kwargs)
            except breakerd.Cooling as refusal:
                wait = float(refusal.wait)
                if wait > limit:
                    return skip(refusal)
                await (asleep(wait) if asleep is not None else asyncio.sleep(wait))
                count("slept", wait)
            except breakerd.Refused as refusal:
                return skip(refusal)
            try:
                return await run_once_async(args, kwargs)
            except breakerd.Refused as refusal:
                return skip(refusal)

        chosen = wrapper_async if inspect.iscoroutinefunction(fn) else wrapper
        chosen.stats = stats
        chosen.max_wait = limit
        return chosen

    return decorate
