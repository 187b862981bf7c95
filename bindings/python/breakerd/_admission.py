"""Admission: a job let through by Segment.admit()."""

from . import _core
from ._classify import Matcher
from ._outcomes import SUCCESS, OutcomeMethods, check_names


ATTEMPTS = {"first": _core.FIRST_ATTEMPT, "retry": _core.RETRY}
_ANY = Matcher((Exception,), "failure")
_NONE = Matcher((), "exclude")


class Admission(OutcomeMethods):
    """A job let through by Segment.admit(): the breaker's permit (if a
    breaker was given) and the pace's slot (if a pace was given). Release
    it exactly once with how the call ended -- success(), failure(reason),
    healthy_error(), rejected(), cancel(), report_http(status, headers) --
    or use it as a context manager, which releases it on every path: a
    clean exit is a success, an exception is classified as in ``with br:``
    (the breaker's failure/exclude/ignore). A rate-limit answer (429, or a
    503/529 with a Retry-After) of a paced admission cuts the pace's rate
    and counts neither way for the breaker (outcome "throttled"). Every
    release returns True if it was reported, False if not (a second
    release, a fork()ed child's copy, a stale permit).
    ``outcome_code``: after the release, the stable code of the answer
    ("OK", "UPSTREAM_TIMEOUT", ..., as brk_outcome_code(); "THROTTLED"
    for a rate-limit answer of a paced admission); ``code`` is "GO"; ``waited``: seconds admit()
    slept; ``taken_at``: the pace slot's time (ns, 0 without a pace)."""

    __slots__ = ("_a", "breaker", "pace", "budget", "_answer")
    _reported_as = "admission"

    def __init__(self, core, breaker, pace, budget):
        self._a = core
        self.breaker = breaker
        self.pace = pace
        self.budget = budget
        self._answer = None  # (outcome, reason) of the release

    @property
    def outcome_code(self):
        a = self._answer
        if a is None:
            return None
        # the recorded outcome: a paced rate-limit answer is "THROTTLED"
        return _core.outcome_code(self._a.recorded_outcome or a[0], a[1])

    code = property(lambda self: self._a.code)
    waited = property(lambda self: self._a.waited)
    taken_at = property(lambda self: self._a.taken_at)
    released = property(lambda self: self._a.released)

    def report(self, outcome, reason="none", retry_after=None):
        """Release with an outcome name (success, failure, healthy_error,
        rejected_request, cancelled, throttled) and a failure reason."""
        check_names(outcome, reason)
        return self._report(outcome, reason, retry_after)

    def _release(self, o, r, ms):
        if self._answer is None and not self._a.released:
            self._answer = (o, r)
        return self._a._release(o, r, ms)

    # success(), failure(), healthy_error(), rejected(), cancel(),
    # report_http(): OutcomeMethods, through _release() above

    def __enter__(self):
        return self

    def __exit__(self, et, ev, tb):
        if self._a.released:
            return False
        if et is None:
            self._release(SUCCESS, 0, 0)
            return False
        br = self.breaker
        self._report_exception(ev, br._failure if br else _ANY,
                               br._exclude if br else _NONE,
                               br._ignore if br else _NONE)
        return False

    def __repr__(self):
        state = f"released {self.outcome_code}" if self.released else "out"
        return f"<breakerd.Admission {self.code} {state}>"
