"""Integrations of breakerd with common Python clients and job runners.

Each submodule imports its framework only when it is imported itself, so
``import breakerd`` never pulls in requests, Celery or APScheduler:

- :mod:`breakerd.integrations.requests` -- ``BreakerAdapter``, a requests
  transport adapter: one shared breaker per upstream host, status and
  Retry-After classified by the library's HTTP classifier, a refusal raised
  before any socket is opened.
- :mod:`breakerd.integrations.celery` -- ``retry_on_refusal``: a refusal (or a
  429/503 whose Retry-After cools the breaker) becomes
  ``task.retry(countdown=wait)`` instead of a lost or failed task.
- :mod:`breakerd.integrations.apscheduler` -- ``guarded``: a job wrapper that
  skips a run the breaker refuses and never sleeps longer than ``max_wait``,
  so one upstream's long Retry-After cannot stall the scheduler.
"""

__all__ = ["requests", "celery", "apscheduler"]
