"""Celery: a refusal or a cooling Retry-After becomes ``task.retry(countdown=wait)``.

A worker process that is refused by a breaker (the upstream is open,
cooling after a 429, or its bulkhead is full) should give the task back to
the broker for later instead of failing it or sleeping on it. A 429/503
with a Retry-After, received by one process, already cools every process of
the host through the shared breaker; the task that got it is retried after
that Retry-After. Two forms::

    from breakerd.integrations.celery import retry_on_refusal

    @app.task(bind=True, max_retries=None)
    @retry_on_refusal()                  # refusals raised inside (e.g. by BreakerAdapter)
    def charge(self, order_id):
        r = session.post(...)            # a 429 response is retried too
        r.raise_for_status()
        return r.json()

    @app.task(bind=True, max_retries=None)
    def charge(self, order_id):
        with retry_on_refusal(self, br):  # the block runs under `with br:`
            ...

What becomes ``task.retry`` (``celery.exceptions.Retry`` is raised; Celery
re-queues the task with the countdown and the same task id):

- a :class:`breakerd.Refused` (any subclass) raised inside: countdown =
  ``refusal.wait`` (seconds, already jittered per caller by the library so
  the fleet's retries spread out), at least ``min_countdown``;
- a ``requests.Response`` returned by the decorated function, or a
  ``requests.HTTPError`` raised with one, whose status the library's
  classifier (:func:`breakerd.classify_http`) calls ``rate_limited`` or
  ``overloaded`` (429, 503, 529): countdown = its Retry-After (seconds or an
  HTTP date), else ``default_countdown``.

``max_countdown`` (seconds or a duration string, default None: no cap)
caps the countdown. Celery's own ``max_retries`` applies: with the default
of 3 a task refused four times fails with the refusal as its exception
(``exc=``); use ``max_retries=None`` for tasks that must not be lost.
Anything else raised passes through unchanged.

Process-safety: stateless; every decision comes from the shared breaker.
"""

import contextlib
import functools

import breakerd

__all__ = ["retry_on_refusal", "retry_countdown"]

_COOLING_REASONS = ("rate_limited", "overloaded")


def _seconds(value, what):
    if value is None:
        return None
    if isinstance(value, str):
        return breakerd.parse_duration(value)
    if isinstance(value, (int, float)) and value >= 0:
        return float(value)
    raise ValueError("%s: seconds >= 0 or a duration string, not %r" % (what, value))


def _response_of(obj):
    """The requests.Response in ``obj`` (a Response, or an exception carrying one)."""
    if hasattr(obj, "status_code") and hasattr(obj, "headers"):
        return obj
    resp = getattr(obj, "response", None)
    if resp is not None and hasattr(resp, "status_code") and hasattr(resp, "headers"):
        return resp
    return None


def _header(headers, name):
    """``headers[name]``, case-insensitively, for any Mapping (or None)."""
    if not headers:
        return None
    value = headers.get(name)
    if value is None:
        low = name.lower()
        for key, val in headers.items():
            if isinstance(key, str) and key.lower() == low:
                return val
    return value


def retry_countdown(obj, default_countdown=1.0):
    """Seconds to wait before retrying after ``obj``, or None if ``obj`` is no reason to.

    ``obj``: a :class:`breakerd.Refused` (its ``wait``), a response with
    ``status_code`` and ``headers``, or an exception with such a
    ``.response`` (a 429/503/529: its Retry-After, else ``default_countdown``).
    """
    if isinstance(obj, breakerd.Refused):
        return float(obj.wait)
    resp = _response_of(obj)
    if resp is None:
        return None
    _outcome, reason, retry_after = breakerd.classify_http(
        int(resp.status_code), _header(resp.headers, "Retry-After"))
    if reason not in _COOLING_REASONS:
        return None
    return float(retry_after) if retry_after is not None else float(default_countdown)


class _Guard(contextlib.AbstractContextManager):
    def __init__(self, task, br, policy):
        self.task = task
        self.br = br
        self.policy = policy
        self._inner = None

    def __enter__(self):
        if self.br is not None:
            try:
                self._inner = self.br.__enter__()
            except breakerd.Refused as refusal:
                self.policy.retry(self.task, refusal)
        return self

    def __exit__(self, exc_type, exc, tb):
        if self.br is not None:
            # let the breaker count the block's outcome first
            self.br.__exit__(exc_type, exc, tb)
        if exc is not None:
            self.policy.maybe_retry(self.task, exc)
        return False

    def check(self, response):
        """Retry the task if ``response`` is a 429/503/529 (returns it otherwise)."""
        self.policy.maybe_retry(self.task, response)
        return response


class _Policy:
    def __init__(self, min_countdown, max_countdown, default_countdown):
        self.min_countdown = _seconds(min_countdown, "min_countdown") or 0.0
        self.max_countdown = _seconds(max_countdown, "max_countdown")
        self.default_countdown = _seconds(default_countdown, "default_countdown")

    def retry(self, task, reason, countdown=None):
        if countdown is None:
            countdown = retry_countdown(reason, self.default_countdown)
        countdown = max(countdown, self.min_countdown)
        if self.max_countdown is not None:
            countdown = min(countdown, self.max_countdown)
        exc = reason if isinstance(reason, BaseException) else None
        raise task.retry(countdown=countdown, exc=exc)

    def maybe_retry(self, task, obj):
        countdown = retry_countdown(obj, self.default_countdown)
        if countdown is not None:
            self.retry(task, obj, countdown)


def retry_on_refusal(task=None, br=None, *, min_countdown=0.0, max_countdown=None,
                     default_countdown=1.0):
    """Turn refusals and cooling responses into ``task.retry(countdown=...)``.

    ``retry_on_refusal(task, br=None)`` with a bound Celery task (``self``
    of a ``bind=True`` task): a context manager; with ``br`` the block runs
    under ``with br:``; ``guard.check(response)`` retries on a 429/503/529.

    ``retry_on_refusal(br=None)`` (no task): a decorator for the function
    of a ``bind=True`` task; it also inspects the value the function
    returns. ``br`` may be a breaker, or a callable ``br(task, *args,
    **kwargs) -> breaker`` chosen per call, or None (only refusals raised
    inside, e.g. by :class:`~breakerd.integrations.requests.BreakerAdapter`).
    """
    policy = _Policy(min_countdown, max_countdown, default_countdown)
    if task is not None and hasattr(task, "retry") and hasattr(task, "request"):
        return _Guard(task, br, policy)
    if task is not None and br is None:
        br, task = task, None   # retry_on_refusal(br) used as a decorator

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            b = br(self, *args, **kwargs) if (br is not None and not hasattr(br, "acquire")
                                              and callable(br)) else br
            with _Guard(self, b, policy):
                result = fn(self, *args, **kwargs)
            policy.maybe_retry(self, result)
            return result
        return wrapper

    return decorate
