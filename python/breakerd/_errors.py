"""Exceptions of breakerd (the C extension raises these classes)."""

__all__ = ["Error", "Refused", "CircuitOpen", "Cooling", "BulkheadFull",
           "RetryDeferred", "NoTokens"]


class Error(OSError):
    """A segment or system error: ``.errno`` is the library's code (an errno
    value, or a BRK_E* code above the errno range) and the message is the
    library's (for attach, the one-line errbuf naming the segment and the
    cause)."""


class Refused(Exception):
    """The call was not admitted: do not call the upstream now.

    ``wait``: seconds to wait before trying again (jittered per caller; 0.0
    when unknown, e.g. forced open or bulkhead full); ``cause``: "open",
    "probes_busy", "forced_open", "cooling", "bulkhead_full", "deferred",
    "no_tokens" or "contended"; ``breaker``: the name of the record that
    refused (this one or an ancestor).
    """

    def __init__(self, wait=0.0, cause="open", breaker="", message=None):
        self.wait = float(wait)
        self.cause = str(cause)
        self.breaker = str(breaker)
        if message is None:
            message = f"{self.breaker}: refused ({self.cause}), retry in {self.wait:.3f} s"
        super().__init__(message)

    def __reduce__(self):  # picklable (multiprocessing, Celery results)
        return (type(self), (self.wait, self.cause, self.breaker, str(self)))


class CircuitOpen(Refused):
    """Open, half-open with every probe slot taken, forced open, or contended."""


class Cooling(Refused):
    """A shared cool-until (from a Retry-After) is running."""


class BulkheadFull(Refused):
    """max_concurrent permits are out across all processes."""


class RetryDeferred(Refused):
    """The retry budget is exhausted: give the work back, do not sleep on it."""


class NoTokens(Refused):
    """The GCRA bucket has too few tokens now; ``wait`` says when it will."""
