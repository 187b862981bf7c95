"""Breaker: a host-wide circuit breaker (`with br:`, `@br`, br.call())."""

import functools
import inspect

from . import _core
from . import _errors
from ._durations import to_ms
from ._permit import Permit
from . import _settings


def _active():
    """[(breaker, permit), ...]: the open `with br:` blocks of this context
    (thread or asyncio task), innermost last. Per context, not on the
    shared Breaker object, so threads and tasks never see each other's."""
    return _core._held()


class Breaker(_core.Guard):
    """A host-wide circuit breaker. ``with br:``, ``async with br:``,
    ``@br`` and ``br.call(fn)`` run a call under a permit and report it on
    every path; ``br.acquire()`` gives the explicit permit.

    ``__enter__``/``__exit__`` and ``call`` are C (_core.Guard, see
    src/py_guard.c and src/py_held.c): a `with` block's permit is kept on a stack
    of the running context (each thread, each asyncio task), never on this
    shared object; only a block left by an exception comes back to Python
    (``_exit_error``) to be classified."""

    __slots__ = ("_segment", "_failure", "_exclude", "_ignore", "_raise_on_trip",
                 "_cursor", "__weakref__")

    def __init__(self, core, segment, failure, exclude, ignore, raise_on_trip=False):
        _core.Guard.__init__(self, core, Permit)
        self._segment = segment
        self._failure = failure
        self._exclude = exclude
        self._ignore = ignore
        self._raise_on_trip = bool(raise_on_trip)
        self._cursor = 0

    @property
    def name(self):
        return self._b.name

    @property
    def state(self):
        return self._b.state

    @property
    def segment(self):
        return self._segment

    @property
    def created(self):
        """True if the segment.breaker() call that made this object
        created the record (its settings are this call's); False if the
        record existed (its settings, state and counts are whoever made
        it first: compare, or configure())."""
        return self._b.created

    # ---- cheap reads (brk_breaker_counts(): a few loads, no snapshot) ----
    @property
    def failure_streak(self):
        """Consecutive failures since the breaker last closed: kept through
        the trip and while open or half-open, + 1 per failed probe, 0 after
        a close or reset() (pybreaker's fail_counter). info()'s
        "consecutive_failures" is the closed generation's count (0 while
        open)."""
        return self._b.failure_streak

    @property
    def half_open_successes(self):
        """Successful probes of the current half-open period."""
        return self._b.half_open_successes

    def counts(self):
        """A dict of the words a caller polls: state, generation,
        consecutive_failures, failure_streak, half_open_successes,
        cooling_level, mode -- read without info()'s snapshot."""
        st, gen, cf, fs, hs, lvl, mode = self._b.counts()
        return {"state": st, "generation": gen, "consecutive_failures": cf,
                "failure_streak": fs, "half_open_successes": hs,
                "cooling_level": lvl, "mode": mode}

    def __repr__(self):
        return f"<breakerd.Breaker {self.name} {self.state}>"

    # ---- permits ----
    # acquire() -> Permit, or raise a Refused subclass: _core.Guard (C)

    def _exit_error(self, permit, exc):
        """Report ``permit`` of a block (or call) left by ``exc`` (called by
        the C __exit__ and call())."""
        if permit.released:
            return
        if not self._raise_on_trip:
            permit._report_exception(exc, self._failure, self._exclude, self._ignore)
            return
        before = self._b.counts()
        permit._report_exception(exc, self._failure, self._exclude, self._ignore)
        after = self._b.counts()
        if after[0] == "open" and before[0] != "open" and after[1] != before[1]:
            # this failure tripped it (or one ending beside it: the two
            # reads are not one snapshot): the caller gets the refusal,
            # the failure as its __context__
            wait = self._b.info()["open_remaining_ms"] / 1000.0
            raise _errors.CircuitOpen(wait, "open", self.name,
                                      f"{self.name}: this call's failure ({type(exc).__name__}) "
                                      f"opened the breaker, retry in {wait:.3f} s")

    # __enter__, __exit__: _core.Guard (C)

    async def __aenter__(self):
        return self._aenter()

    async def __aexit__(self, et, ev, tb):
        return self._aexit(et, ev, tb)

    def __call__(self, fn):
        """Decorate a function, a coroutine function or a generator
        function. A generator is guarded from its first next() to its end:
        one permit for the whole iteration, reported when it returns
        (success), raises (classified as for a function) or is closed
        unfinished (cancelled); values sent in reach it (``yield from``).
        An async generator likewise, without asend()/athrow() forwarding."""
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def guarded_gen(*args, **kwargs):
                with self:
                    return (yield from fn(*args, **kwargs))
            return guarded_gen
        if inspect.isasyncgenfunction(fn):
            @functools.wraps(fn)
            async def guarded_agen(*args, **kwargs):
                async with self:
                    async for item in fn(*args, **kwargs):
                        yield item
            return guarded_agen
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
        if (inspect.iscoroutinefunction(fn) or inspect.isgeneratorfunction(fn)
                or inspect.isasyncgenfunction(fn)):
            return self(fn)(*args, **kwargs)  # the coroutine or generator
        self(fn)  # the checks of the decorator (not callable ...)
        with self:
            return fn(*args, **kwargs)

    # ---- inspection and steering ----
    def info(self):
        """A snapshot: the fields of `bctl inspect --json`."""
        return self._b.info()

    def reset(self):
        self._b.reset()

    def trip(self, for_="60s", *, restart=False):
        """Force open for ``for_``; False if it was already open (its
        period then runs on unchanged). ``restart=True``: open for exactly
        ``for_`` from now whatever the state -- an open breaker's period
        restarts, shorter or longer (pybreaker's open()); returns True."""
        ms = to_ms(for_, "for_")
        if ms == 0:
            raise ValueError("for_ must be at least 1 ms")
        if restart:
            return self._b.trip_restart(ms)
        return self._b.trip(ms)

    def add_listener(self, callback, kinds=None):
        """Segment.add_listener(callback, names=this breaker's name,
        kinds=kinds): hear this breaker's events (and those of names below
        it) from every process, as they are written."""
        return self._segment.add_listener(callback, names=(self.name,), kinds=kinds)

    def half_open(self):
        """Force half-open now (from closed or open): the next callers in
        any process are probes; success_threshold successes close it, a
        failure re-opens it. False if it was half-open already."""
        return self._b.half_open()

    def events(self, cursor=None):
        """(events, next_cursor): this breaker's events (as
        Segment.events()) from ``cursor`` on. ``cursor=None``: this
        object's own cursor, advanced by each call, so a caller polling
        one name needs no bookkeeping (it starts at the oldest event still
        kept)."""
        own = cursor is None
        evs, nxt = self._segment.events(self._cursor if own else cursor)
        if own:
            self._cursor = nxt
        name = self.name
        return [e for e in evs if e["name"] == name], nxt

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
        if ("open_ms" in cfg and "max_open" not in settings
                and cfg["open_ms"] > full.get("max_open_ms", 0)):
            # a longer first period than the cap: the cap follows it
            # (name max_open to be told it is too small instead)
            cfg["max_open_ms"] = cfg["open_ms"]
        full.update(cfg)
        _settings.check(full, settings)
        self._b.configure(cfg)
