"""Pace and PaceToken: a host-wide learned rate and one request's slot
at it."""


from . import _core
from ._classify import OUTCOMES, REASONS, classify_http_ms, header
from ._durations import to_ms
from ._errors import NoTokens
from ._outcomes import check_names, retry_ms


PRIORITIES = {"normal": _core.PRIORITY_NORMAL, "high": _core.PRIORITY_HIGH}


def priority_code(priority):
    if not isinstance(priority, str):
        raise TypeError(f"priority must be 'normal' or 'high', not {type(priority).__name__}")
    if priority not in PRIORITIES:
        raise ValueError(f"priority must be 'normal' or 'high', not {priority!r}")
    return PRIORITIES[priority]


def _pace_signal(status, outcome, reason, retry_after, headers):
    """(signal, retry_after_ms) of an answer given as an HTTP ``status``
    (with ``headers``' Retry-After) or as an ``outcome`` and ``reason``
    name (see Permit); ``retry_after`` (seconds or a duration string)
    overrides the header."""
    if (status is None) == (outcome is None):
        raise TypeError("give exactly one of status= (an HTTP status) or outcome=")
    ms = None if retry_after is None else retry_ms(retry_after)
    if status is not None:
        o, r, hms = classify_http_ms(status, header(headers, "Retry-After"))
        if o is None:
            return _core.PACE_IGNORE, 0  # no verdict: no signal
        ms = hms if ms is None else ms
    else:
        if headers is not None:
            raise TypeError("headers= goes with status=, not outcome=")
        check_names(outcome, reason)
        o, r = outcome, reason
    ms = ms or 0
    return _core.pace_signal_of(OUTCOMES[o], REASONS[r], ms), ms


class PaceToken:
    """One request's slot at a pace's rate (Pace.take()). Report how the
    upstream answered, once: ``report(status=429, headers=...)`` or
    ``report(outcome="failure", reason="rate_limited", retry_after=1)``.
    As a context manager it reports for you if you did not: a clean exit
    is a success (``ok``), an exception no signal (a connection error says
    nothing about the upstream's rate limit)."""

    __slots__ = ("pace", "taken_at", "waited", "reported", "cut")

    def __init__(self, pace, taken_at, waited):
        self.pace = pace
        self.taken_at = taken_at  # ns, segment clock (Segment.now_ns())
        self.waited = waited      # seconds slept for it
        self.reported = False
        self.cut = None           # after report(): True if it cut the rate

    def report(self, status=None, *, outcome=None, reason="none", retry_after=None,
               headers=None):
        """Report the answer; True if it cut the shared rate. A second
        report is refused (RuntimeError): each answer counts once."""
        if self.reported:
            raise RuntimeError(f"{self.pace.name}: this token was already reported")
        self.cut = self.pace.report(self.taken_at, status, outcome=outcome, reason=reason,
                                    retry_after=retry_after, headers=headers)
        self.reported = True
        return self.cut

    def __enter__(self):
        return self

    def __exit__(self, et, ev, tb):
        if not self.reported:
            self.reported = True
            self.cut = self.pace._k._report(self.taken_at,
                                            _core.PACE_OK if et is None else _core.PACE_IGNORE, 0)
        return False

    def __repr__(self):
        return f"<breakerd.PaceToken {self.pace.name} at {self.taken_at}>"


class Pace:
    """A host-wide learned rate (a GCRA bucket in paced mode): it starts at
    ``ceiling``, each rate-limit answer reported to it (a 429, or a 503/529
    with a Retry-After) cuts the rate for every process at once (one cut per
    round trip), and it grows back along the CUBIC curve (RFC 8312) towards
    the ceiling. ``reserve_pct`` of the rate is kept for high priority.
    ``fleet=True``: breakerd --fleet shares its cuts with the other hosts."""

    __slots__ = ("_k", "_segment")

    def __init__(self, core, segment):
        self._k = core
        self._segment = segment

    @property
    def name(self):
        return self._k.name

    def take(self, priority="normal", wait=0):
        """A PaceToken, sleeping up to ``wait`` (seconds or a duration
        string; 0: never sleeps) for a slot reserved in arrival order
        across processes (a fair wait: the library's brk_pace_reserve);
        a slot past ``wait`` raises NoTokens at once (``wait``: when it
        would have been), nothing reserved. On a segment with a FakeClock
        it never sleeps: a take that would have to wait raises NoTokens
        at once (tests move the clock)."""
        at, waited = self._k._take_wait(priority_code(priority), to_ms(wait, "wait"))
        return PaceToken(self, at, waited)

    def try_take(self, priority="normal"):
        """(token, 0.0) if taken, else (None, seconds to wait, jittered)."""
        at, w = self._k._take(priority_code(priority))
        return (PaceToken(self, at, 0.0), 0.0) if w == 0.0 else (None, w)

    def report(self, taken_at, status=None, *, outcome=None, reason="none",
               retry_after=None, headers=None):
        """Tell the pace how the request taken at ``taken_at`` (ns, a
        token's ``taken_at``) was answered: an HTTP ``status`` (its
        Retry-After from ``headers``) or an ``outcome`` name with a
        ``reason``, as Permit.report_http / Permit.failure take them. A
        429, or a 503/529 with a Retry-After, cuts the rate if the request
        was taken at the current rate; a success feeds the accepted-rate
        estimate; anything else is ignored. Returns True if this report cut
        the rate."""
        if isinstance(taken_at, bool) or not isinstance(taken_at, int):
            raise TypeError(f"taken_at must be an int (ns), not {type(taken_at).__name__}")
        sig, ms = _pace_signal(status, outcome, reason, retry_after, headers)
        return self._k._report(taken_at, sig, ms)

    def info(self):
        """The fields of `bctl inspect --json` (with "paced" and "pace")."""
        return self._k.info()

    def update(self, *, ceiling=None, floor=None, burst=None, reserve_pct=None,
               fleet=None):
        """Change only the settings given; the learned state is kept."""
        self._k.update(ceiling, floor, burst, reserve_pct, fleet)

    def __repr__(self):
        return f"<breakerd.Pace {self.name}>"
