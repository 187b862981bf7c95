"""Test helpers: an injected clock."""

from . import _core
from ._durations import to_ms


class FakeClock(_core.FakeClock):
    """A monotonic clock for unit tests: pass it as attach(clock=...). Its
    value lives in C (a uint64 the library reads directly, with no Python
    call and no GIL), so it only moves when advance() is called."""

    __slots__ = ()

    def __init__(self, start=1000.0):
        super().__init__(start_ns=int(round(start * 1e9)))

    def advance(self, seconds):
        """Move forward by ``seconds`` (a number, or a duration string such
        as "250ms"); the clock never goes back."""
        if isinstance(seconds, str):
            ns = to_ms(seconds, "seconds") * 1_000_000
        else:
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
                raise TypeError("seconds must be a number or a duration string")
            if not seconds >= 0:
                raise ValueError("a FakeClock never goes back: seconds must be >= 0")
            ns = int(round(seconds * 1e9))
        return self._advance_ns(ns)

    @property
    def now(self):
        """The clock's time in seconds."""
        return self.now_ns / 1e9
