"""breakerd: host-wide circuit breakers, bulkheads, GCRA rate limits and
retry budgets shared by every process on one host (libbreaker, in a POSIX
shared-memory segment).

    import breakerd
    seg = breakerd.attach()                  # $BREAKERD_SHM, else /breakerd
    br = seg.breaker("payments/api", failure_threshold=5, open="30s")
    with br:                                 # raises breakerd.Refused if refused
        call_the_api()

GIL: breakerd keeps the GIL held around acquire/release (a few atomic
instructions, ~40 ns: cheaper than releasing and re-taking the GIL) and
releases it only in attach(), which may wait for another process that is
creating the segment.

Fork: a process fork()ed after attach() (gunicorn --preload, multiprocessing
"fork") shares the parent's segment and sees the same state; a Permit it
inherited belongs to the parent: reporting it in the child changes nothing
and returns False. Threads and asyncio tasks: each `with br:` keeps its
permit on a stack of the running context (contextvars: each thread, each
task), never on the shared Breaker; each entry records the frame that
entered it, so a generator suspended inside `with br:` leaves with its own
permit. `with br:` and `br.call()` are C on the success path (src/py_guard.c,
src/py_held.c).
"""

from . import _errors
from ._errors import (BulkheadFull, CircuitOpen, Cooling, DeadlineExpired, Error,
                      NoTokens, Refused, RetryDeferred)
from . import _core
from ._classify import classify_http
from ._durations import parse_duration
from ._admission import Admission
from ._breaker import Breaker
from ._bucket import Bucket
from ._budget import Budget
from ._pace import Pace, PaceToken
from ._permit import Permit
from ._segment import Segment, attach

__version__ = "0.1.0"

__all__ = [
    "attach", "Segment", "Breaker", "Permit", "Bucket", "Budget", "Pace", "PaceToken",
    "Admission", "DeadlineExpired",
    "Error", "Refused", "CircuitOpen", "Cooling", "BulkheadFull", "RetryDeferred",
    "NoTokens", "classify_http", "parse_duration",
]


def __getattr__(name):
    if name == "testing":  # breakerd.testing without an explicit import
        import importlib
        return importlib.import_module(".testing", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
