"""Exceptions of breakerd (the C extension raises these classes)."""

__all__ = ["Error", "Refused", "CircuitOpen", "Cooling", "BulkheadFull",
           "RetryDeferred", "NoTokens", "DeadlineExpired"]

# Refused.code of each cause: the library's stable admission codes
# (brk_admit_code_name(); docs/design/limits.md "Admission").
CODES = {
    "open": "BREAKER_OPEN", "probes_busy": "BREAKER_OPEN", "forced_open": "BREAKER_OPEN",
    "cooling": "COOLING", "bulkhead_full": "BULKHEAD_FULL", "deferred": "DEFERRED",
    "no_tokens": "RATE_LIMITED", "contended": "CONTENDED", "expired": "EXPIRED",
}


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
    "no_tokens", "contended" or "expired"; ``breaker``: the name of the
    record that refused (this one or an ancestor); ``code``: the stable
    code of the refusal, as Segment.admit() and logs give it: "EXPIRED",
    "BREAKER_OPEN", "COOLING", "RATE_LIMITED", "BULKHEAD_FULL",
    "DEFERRED" or "CONTENDED". ``Refused("message")`` makes one by hand
    (wait 0.0, cause "open").
    """

    def __init__(self, wait=0.0, cause="open", breaker="", message=None, code=None):
        if isinstance(wait, str) and message is None:
            # Refused("message"), as any exception is raised by hand (and
            # as pybreaker's CircuitBreakerError("...") is)
            message, wait = wait, 0.0
        self.wait = float(wait)
        self.cause = str(cause)
        self.breaker = str(breaker)
        self.code = str(code) if code is not None else CODES.get(self.cause, "BREAKER_OPEN")
        if message is None:
            message = f"{self.breaker}: refused ({self.cause}), retry in {self.wait:.3f} s"
        super().__init__(message)

    def __reduce__(self):  # picklable (multiprocessing, Celery results)
        return (type(self), (self.wait, self.cause, self.breaker, str(self), self.code))


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


class DeadlineExpired(Refused):
    """Segment.admit(): the job's deadline would pass before its wait ends
    (code "EXPIRED"): refused at once, nothing taken."""
