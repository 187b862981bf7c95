"""How an admitted call ended, written once for Permit and Admission:
success(), failure(reason), healthy_error(), rejected(), cancel() and
report_http(status, headers, body). Each class reports through its own
``_release(outcome, reason, retry_after_ms)``."""

from . import _core
from ._classify import OUTCOMES, REASONS, classify_http_ms, header, outcome_of
from ._durations import to_ms

SUCCESS = _core.SUCCESS


def retry_ms(retry_after):
    ms = to_ms(retry_after, "retry_after", none_ok=True)
    return ms or 0


def check_reason(reason):
    if reason not in REASONS:
        raise ValueError(f"reason must be one of {', '.join(REASONS)}, not {reason!r}")


def check_names(outcome, reason):
    """ValueError unless ``outcome`` names an outcome and ``reason`` a
    reason (the outcome is checked first)."""
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}, not {outcome!r}")
    check_reason(reason)


class OutcomeMethods:
    """The outcome methods of Permit and Admission (a mixin: no state of
    its own). ``_reported_as`` names the object in report_http's error."""

    __slots__ = ()
    _reported_as = "permit"

    def _report(self, outcome, reason="none", retry_after=None):
        ms = 0 if retry_after is None else retry_ms(retry_after)
        return self._release(OUTCOMES[outcome], REASONS[reason], ms)

    def success(self, retry_after=None):
        if retry_after is None:
            return self._release(SUCCESS, 0, 0)
        return self._report("success", "none", retry_after)

    def failure(self, reason="server_error", retry_after=None):
        check_reason(reason)
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
                             f"report the {self._reported_as} yourself")
        return self._release(OUTCOMES[outcome], REASONS[reason], ms)

    def _report_exception(self, exc, failure, exclude, ignore):
        """Report a call left by ``exc``, classified by the matchers
        ``failure``, ``exclude`` and ``ignore``; if a classifier callable
        raises, cancel (still exactly once) and let that propagate."""
        try:
            outcome, reason = outcome_of(exc, failure, exclude, ignore)
        except BaseException:
            self.cancel()  # a classifier callable raised: still exactly once
            raise
        self._report(outcome, reason)
