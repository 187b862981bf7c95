"""Segment, Breaker, Permit, Bucket and Budget: the Python face of
breakerd._core."""

import functools
import inspect
import time

from . import _core
from ._classify import (OUTCOMES, REASONS, Matcher, classify_http_ms, header,
                        outcome_of)
from ._durations import to_ms
from ._errors import NoTokens
from . import _settings


def _active():
    """[(breaker, permit), ...]: the open `with br:` blocks of this context
    (thread or asyncio task), innermost last. Per context, not on the
    shared Breaker object, so threads and tasks never see each other's."""
    return _core._held()


_SUCCESS = _core.SUCCESS


def _retry_ms(retry_after):
    ms = to_ms(retry_after, "retry_after", none_ok=True)
    return ms or 0


class Permit(_core.Permit):
    """An admitted call. Report it exactly once; every report returns True
    if the library counted it, False if not (a second report, a permit
    inherited from a fork()ed parent, a breaker reset or moved to a new
    generation since). ``counted`` is None until reported."""

    __slots__ = ()

    def _report(self, outcome, reason="none", retry_after=None):
        ms = 0 if retry_after is None else _retry_ms(retry_after)
        return self._release(OUTCOMES[outcome], REASONS[reason], ms)

    # success(retry_after=None): C (_core.Permit) without an argument, else:
    def _success_slow(self, retry_after=None):
        if retry_after is None:
            return self._release(_SUCCESS, 0, 0)
        return self._report("success", "none", retry_after)

    def failure(self, reason="server_error", retry_after=None):
        if reason not in REASONS:
            raise ValueError(f"reason must be one of {', '.join(REASONS)}, not {reason!r}")
        return self._report("failure", reason, retry_after)

    def healthy_error(self, retry_after=None):
        return self._report("healthy_error", "none", retry_after)

    def rejected(self, retry_after=None):
        return self._report("rejected_request", "none", retry_after)

    def cancel(self):
        return self._report("cancelled")

    def report_http(self, status, headers=None, body=None):
        """Classify an HTTP response (status, Retry-After from ``headers``,
        ``body`` text) and report it."""
        outcome, reason, ms = classify_http_ms(status, header(headers, "Retry-After"), body)
        if outcome is None:
            raise ValueError(f"status {status!r} and the body give no verdict: "
                             "report the permit yourself")
        return self._release(OUTCOMES[outcome], REASONS[reason], ms)

    @property
    def breaker(self):
        return self._core_breaker.name

    def __repr__(self):
        state = ("counted" if self.counted else "not counted") if self.released else "out"
        return f"<breakerd.Permit {self.breaker} {state}>"


class Breaker(_core.Guard):
    """A host-wide circuit breaker. ``with br:``, ``async with br:``,
    ``@br`` and ``br.call(fn)`` run a call under a permit and report it on
    every path; ``br.acquire()`` gives the explicit permit.

    ``__enter__``/``__exit__`` and ``call`` are C (_core.Guard, see
    src/guard.c and src/held.c): a `with` block's permit is kept on a stack
    of the running context (each thread, each asyncio task), never on this
    shared object; only a block left by an exception comes back to Python
    (``_exit_error``) to be classified."""

    __slots__ = ("_segment", "_failure", "_exclude", "_ignore", "__weakref__")

    def __init__(self, core, segment, failure, exclude, ignore):
        _core.Guard.__init__(self, core, Permit)
        self._segment = segment
        self._failure = failure
        self._exclude = exclude
        self._ignore = ignore

    @property
    def name(self):
        return self._b.name

    @property
    def state(self):
        return self._b.state

    @property
    def segment(self):
        return self._segment

    def __repr__(self):
        return f"<breakerd.Breaker {self.name} {self.state}>"

    # ---- permits ----
    # acquire() -> Permit, or raise a Refused subclass: _core.Guard (C)

    def _exit_error(self, permit, exc):
        """Report ``permit`` of a block (or call) left by ``exc`` (called by
        the C __exit__ and call())."""
        if permit.released:
            return
        try:
            outcome, reason = outcome_of(exc, self._failure, self._exclude, self._ignore)
        except BaseException:
            permit.cancel()  # a classifier callable raised: still exactly once
            raise
        permit._report(outcome, reason)

    # __enter__, __exit__: _core.Guard (C)

    async def __aenter__(self):
        return self._aenter()

    async def __aexit__(self, et, ev, tb):
        return self._aexit(et, ev, tb)

    def __call__(self, fn):
        """Decorate a function or a coroutine function."""
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            # the call would only create the generator: the permit would be
            # reported before the generator ran
            raise TypeError(f"@{self.name} cannot guard a generator function "
                            f"({fn.__name__}): use `with br:` inside it")
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def guarded_async(*args, **kwargs):
                async with self:
                    return await fn(*args, **kwargs)
            return guarded_async
        if not callable(fn):
            raise TypeError(f"@{self.name} decorates a callable, not {type(fn).__name__}")
        call = self.call  # C: no `with` and no stack for the permit

        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            return call(fn, *args, **kwargs)
        return guarded

    # call(fn, *args, **kwargs): _core.Guard (C) for plain functions and
    # builtins; everything else comes here.
    def _call_slow(self, fn, *args, **kwargs):
        if inspect.iscoroutinefunction(fn):
            return self(fn)(*args, **kwargs)  # the coroutine to await
        self(fn)  # the checks of the decorator (generator functions ...)
        with self:
            return fn(*args, **kwargs)

    # ---- inspection and steering ----
    def info(self):
        """A snapshot: the fields of `bctl inspect --json`."""
        return self._b.info()

    def reset(self):
        self._b.reset()

    def trip(self, for_="60s"):
        """Force open for ``for_``; False if it was already open."""
        ms = to_ms(for_, "for_")
        if ms == 0:
            raise ValueError("for_ must be at least 1 ms")
        return self._b.trip(ms)

    def force_open(self):
        return self._b.set_mode(_core.MODE_FORCED_OPEN)

    def disable(self):
        return self._b.set_mode(_core.MODE_DISABLED)

    def metrics_only(self):
        return self._b.set_mode(_core.MODE_METRICS_ONLY)

    def normal(self):
        """Back to normal mode (without resetting the state machine)."""
        return self._b.set_mode(_core.MODE_NORMAL)

    def configure(self, **settings):
        """Change the settings of the existing record (state and counters
        are kept)."""
        cfg = _settings.to_config(settings)
        full = dict(self._b.info()["config"])
        full.update(cfg)
        _settings.check(full, settings)
        self._b.configure(cfg)


class Bucket:
    """A host-wide GCRA rate limit."""

    __slots__ = ("_k", "_segment")

    def __init__(self, core, segment):
        self._k = core
        self._segment = segment

    @property
    def name(self):
        return self._k.name

    def take(self, n=1):
        """Take n tokens, or raise NoTokens(wait=seconds)."""
        wait = self._k._take(n)
        if wait:
            raise NoTokens(wait=wait, cause="no_tokens", breaker=self.name)

    def try_take(self, n=1):
        """0.0 if taken, else the seconds to wait (jittered)."""
        return self._k._take(n)

    def info(self):
        return self._k.info()

    def configure(self, *, rate, burst):
        self._k.configure(rate, burst)

    def __repr__(self):
        return f"<breakerd.Bucket {self.name}>"


class Budget:
    """A host-wide retry budget (Finagle's)."""

    __slots__ = ("_g", "_segment")

    def __init__(self, core, segment):
        self._g = core
        self._segment = segment

    @property
    def name(self):
        return self._g.name

    def deposit(self):
        """Record one first attempt."""
        self._g.deposit()

    def retry(self):
        """Take one retry, or raise RetryDeferred (``wait``: when the floor
        next holds a token, an estimate; 0.0 if there is no floor)."""
        self._g.retry()

    def info(self):
        return self._g.info()

    def configure(self, *, floor, ratio):
        self._g.configure(floor, ratio)

    def __repr__(self):
        return f"<breakerd.Budget {self.name}>"


class Segment:
    """An attached segment; a context manager that closes it."""

    __slots__ = ("_s", "lost_events", "__weakref__")

    def __init__(self, core):
        self._s = core
        self.lost_events = 0

    @property
    def shm(self):
        return self._s.shm

    @property
    def closed(self):
        return self._s.closed

    @property
    def readonly(self):
        return self._s.readonly

    def close(self):
        self._s.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return f"<breakerd.Segment {self.shm}{' closed' if self.closed else ''}>"

    def breaker(self, name, *, failure=(Exception,), exclude=(), ignore=(), **settings):
        """Get or create the breaker ``name``; ``settings`` apply only if
        this call creates the record (see Breaker.configure)."""
        f = Matcher(failure, "failure")
        e = Matcher(exclude, "exclude")
        i = Matcher(ignore, "ignore")
        cfg = _settings.to_config(settings)
        full = _core.config_defaults()
        full.update(cfg)
        _settings.check(full, settings)
        return Breaker(self._s.breaker(name, cfg), self, f, e, i)

    def bucket(self, name, *, rate, burst):
        return Bucket(self._s.bucket(name, rate, burst), self)

    def budget(self, name, *, floor=10.0, ratio=0.2):
        return Budget(self._s.budget(name, floor, ratio), self)

    def events(self, cursor=0):
        """(events, next_cursor): the events with sequence >= cursor still
        in the ring, oldest first. Events overwritten before they could be
        read are added to ``lost_events``."""
        evs, nxt, lost = self._s.events(cursor)
        self.lost_events += lost
        return evs, nxt

    def iter_events(self, cursor=0, follow=False, poll=0.1):
        """Yield events from ``cursor`` on; with follow=True wait for new
        ones (polling every ``poll`` seconds) forever."""
        while True:
            evs, cursor = self.events(cursor)
            yield from evs
            if not follow:
                return
            if not evs:
                time.sleep(poll)

    def info(self):
        """The segment header (capacity, used, daemon heartbeat ...)."""
        return self._s.info()

    def records(self):
        """Info dicts of every record (breakers, buckets, budgets)."""
        return self._s.records()

    def record_count(self):
        """Live records: published and not retired."""
        return self._s.record_count()

    def retire(self, name, *, idle=None):
        """Retire the record ``name`` so its name and storage can be used
        again; True if retired, False if kept because it is in use (a probe
        or permit held, not closed, a forced mode, or with ``idle`` (seconds
        or a duration string) activity within that long). Handles to it
        keep working: their next call re-creates it fresh. A name that
        does not exist raises LookupError."""
        ms = 0 if idle is None else to_ms(idle, "idle")
        return self._s.retire(name, ms)

    def retire_idle(self, idle):
        """One pass over every record: retire those seen unchanged for
        ``idle`` (seconds or a duration string). Returns how many; a record
        is retired only once passes have watched it that long (breakerd
        --retire-idle runs such passes continuously)."""
        return self._s.retire_idle(to_ms(idle, "idle"))


def attach(shm=None, *, capacity=None, readonly=False, clock=None):
    """Create or attach the segment: ``shm``, else $BREAKERD_SHM, else
    "/breakerd". ``clock``: a breakerd.testing.FakeClock for tests."""
    return Segment(_core.attach(shm, capacity, bool(readonly), clock))
