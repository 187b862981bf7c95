"""How an exception raised inside ``with br:`` is counted, and how an HTTP
response is classified."""


from . import _core
from ._errors import Refused

OUTCOMES = {
    "success": _core.SUCCESS,
    "failure": _core.FAILURE,
    "healthy_error": _core.HEALTHY_ERROR,
    "rejected_request": _core.REJECTED_REQUEST,
    "cancelled": _core.CANCELLED,
    "throttled": _core.THROTTLED,
}
_OUTCOME_NAMES = {v: k for k, v in OUTCOMES.items()}
REASONS = {
    "none": _core.REASON_NONE,
    "timeout": _core.REASON_TIMEOUT,
    "connect": _core.REASON_CONNECT,
    "server_error": _core.REASON_SERVER_ERROR,
    "overloaded": _core.REASON_OVERLOADED,
    "rate_limited": _core.REASON_RATE_LIMITED,
    "other": _core.REASON_OTHER,
}
_REASON_NAMES = {v: k for k, v in REASONS.items()}


class Matcher:
    """Exception classes and predicates (callables exc -> bool)."""

    __slots__ = ("classes", "predicates")

    def __init__(self, spec, argname):
        if spec is None:
            spec = ()
        if isinstance(spec, type) or (callable(spec) and not isinstance(spec, (tuple, list))):
            spec = (spec,)
        if not isinstance(spec, (tuple, list, set, frozenset)):
            raise TypeError(f"{argname} must be an exception class, a callable "
                            f"exc -> bool, or a tuple of them, not {type(spec).__name__}")
        classes, preds = [], []
        for item in spec:
            if isinstance(item, type):
                if not issubclass(item, BaseException):
                    raise TypeError(f"{argname}: {item.__name__} is not an exception class")
                classes.append(item)
            elif callable(item):
                preds.append(item)
            else:
                raise TypeError(f"{argname}: {item!r} is neither an exception class "
                                "nor a callable")
        self.classes = tuple(classes)
        self.predicates = tuple(preds)

    def __call__(self, exc):
        if self.classes and isinstance(exc, self.classes):
            return True
        return any(p(exc) for p in self.predicates)


def reason_of(exc):
    """The failure reason an exception suggests."""
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, ConnectionError):
        return "connect"
    return "other"


def outcome_of(exc, failure, exclude, ignore):
    """(outcome name, reason name) for an exception that left ``with br:``.

    A refusal (of this or another breaker, raised inside) and a
    BaseException that is not an Exception (KeyboardInterrupt,
    asyncio.CancelledError, SystemExit) mean we gave up locally: cancelled.
    Then ``ignore`` -> rejected_request (counted neither way), ``exclude``
    -> healthy_error (counts as success), ``failure`` -> failure; an
    Exception matched by none of them is not the upstream's fault:
    healthy_error."""
    if isinstance(exc, Refused):
        return "cancelled", "none"
    if ignore(exc):
        return "rejected_request", "none"
    if exclude(exc):
        return "healthy_error", "none"
    if failure(exc):
        return "failure", reason_of(exc)
    if not isinstance(exc, Exception):
        return "cancelled", "none"
    return "healthy_error", "none"


# ---- HTTP ------------------------------------------------------------------

def classify_http_ms(status, retry_after=None, body=None, now_unix_ms=0):
    """(outcome or None, reason, retry_after_ms) of an HTTP answer; outcome
    None: no verdict (status 0 and no sign in the text)."""
    if isinstance(status, bool) or not isinstance(status, int):
        raise TypeError(f"status must be an int, not {type(status).__name__}")
    if status != 0 and not 100 <= status <= 999:
        raise ValueError(f"status {status} is not an HTTP status (0, or 100..999)")
    if retry_after is not None and not isinstance(retry_after, str):
        if isinstance(retry_after, bytes):
            retry_after = retry_after.decode("latin-1")
        else:
            raise TypeError("retry_after must be a str (the header's value) or None")
    if retry_after is not None and "\0" in retry_after:
        raise ValueError("retry_after must not contain a NUL character")
    if body is not None and not isinstance(body, (str, bytes, bytearray)):
        raise TypeError("body must be str, bytes or None")
    if isinstance(body, bytearray):
        body = bytes(body)
    o, r, ms = _core.http_classify(status, body, retry_after, int(now_unix_ms))
    return _OUTCOME_NAMES.get(o), _REASON_NAMES.get(r, "other"), max(ms, 0)


def classify_http(status, retry_after=None, body=None):
    """(outcome, reason, retry_after_s or None) of an HTTP response, by the
    library's table (brk_http_classify): 1xx-3xx success; 404
    healthy_error; 408, 504 failure/timeout; 429 failure/rate_limited;
    other 4xx rejected_request; 503, 529 failure/overloaded; other 5xx
    failure/server_error; 600-999 failure/other. The Retry-After (seconds
    or an HTTP-date) is kept for failures only. Outcome None: no verdict."""
    o, r, ms = classify_http_ms(status, retry_after, body)
    return o, r, (ms / 1000.0 if ms > 0 else None)


def header(headers, name):
    """A header's value from a Mapping (case-insensitively) or None."""
    if headers is not None and not hasattr(headers, "get"):
        raise TypeError("headers must be a mapping of header names to values "
                        f"(a dict or requests' headers), not {type(headers).__name__}")
    if not headers:
        return None
    v = headers.get(name)
    if v is None:
        low = name.lower()
        for k, val in headers.items():
            if isinstance(k, str) and k.lower() == low:
                return val
    return v
