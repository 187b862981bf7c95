"""Breaker: a host-wide circuit breaker (`with br:`, `@br`, br.call())."""

import functools
import inspect

from . import _core
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
        permit._report_exception(exc, self._failure, self._exclude, self._ignore)

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
