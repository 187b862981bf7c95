"""retry_on_refusal with real Celery tasks: Task.retry runs for real (the
retry message goes to an in-memory kombu broker) and raises
celery.exceptions.Retry whose ``when`` is the countdown."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fleet"))

from pyint_fixtures import seg, shm_name, upstream  # noqa: E402,F401


import pytest
from celery import Celery
from celery.exceptions import Retry

import breakerd
from breakerd.integrations.celery import retry_on_refusal, retry_countdown


class FakeResponse:
    def __init__(self, status, headers=None):
        self.status_code = status
        self.headers = headers or {}


class HTTPErr(Exception):
    def __init__(self, response):
        super().__init__("http %d" % response.status_code)
        self.response = response


@pytest.fixture
def app():
    a = Celery("t", broker="memory://", set_as_current=False)
    a.conf.task_ignore_result = True
    yield a


def run_as_worker(task, *args, retries=0):
    """Run the task body as a worker would (not 'called directly')."""
    task.push_request(id="task-1", retries=retries, called_directly=False,
                      delivery_info={}, args=args, kwargs={})
    try:
        return task.run(*args)
    finally:
        task.pop_request()


def test_refusal_raised_inside_becomes_retry_with_its_wait(app):
    @app.task(bind=True, max_retries=None)
    @retry_on_refusal()
    def t(self):
        raise breakerd.Cooling(wait=1.75, cause="cooling", breaker="x/y")

    with pytest.raises(Retry) as ei:
        run_as_worker(t)
    assert ei.value.when == pytest.approx(1.75)
    assert isinstance(ei.value.exc, breakerd.Cooling)


def test_429_response_returned_becomes_retry_after_its_retry_after(app):
    @app.task(bind=True, max_retries=None)
    @retry_on_refusal()
    def t(self):
        return FakeResponse(429, {"retry-after": "7"})

    with pytest.raises(Retry) as ei:
        run_as_worker(t)
    assert ei.value.when == pytest.approx(7.0)


def test_503_http_error_without_retry_after_uses_default_countdown(app):
    @app.task(bind=True, max_retries=None)
    @retry_on_refusal(default_countdown=3)
    def t(self):
        raise HTTPErr(FakeResponse(503))

    with pytest.raises(Retry) as ei:
        run_as_worker(t)
    assert ei.value.when == pytest.approx(3.0)


def test_other_results_and_errors_pass_through(app):
    @app.task(bind=True, max_retries=None)
    @retry_on_refusal()
    def ok(self):
        return FakeResponse(200)

    @app.task(bind=True, max_retries=None)
    @retry_on_refusal()
    def bad(self):
        raise HTTPErr(FakeResponse(404))

    assert run_as_worker(ok).status_code == 200
    with pytest.raises(HTTPErr):
        run_as_worker(bad)


def test_countdown_is_capped_and_floored(app):
    @app.task(bind=True, max_retries=None)
    @retry_on_refusal(max_countdown="2s", min_countdown=0.5)
    def t(self, wait):
        raise breakerd.CircuitOpen(wait=wait, cause="open", breaker="x")

    with pytest.raises(Retry) as ei:
        run_as_worker(t, 3600.0)
    assert ei.value.when == pytest.approx(2.0)
    with pytest.raises(Retry) as ei:
        run_as_worker(t, 0.0)
    assert ei.value.when == pytest.approx(0.5)


def test_max_retries_exceeded_raises_the_refusal(app):
    @app.task(bind=True, max_retries=2)
    @retry_on_refusal()
    def t(self):
        raise breakerd.CircuitOpen(wait=1.0, cause="open", breaker="x")

    with pytest.raises(breakerd.CircuitOpen):
        run_as_worker(t, retries=2)


def test_context_form_runs_the_block_under_the_breaker(app, seg):
    br = seg.breaker("cel/ctx", failure_threshold=2, open="30s")
    ran = []

    @app.task(bind=True, max_retries=None)
    def t(self, fail):
        with retry_on_refusal(self, br):
            ran.append(1)
            if fail:
                raise ConnectionError("down")
            return "ok"

    assert run_as_worker(t, False) == "ok"
    for _ in range(2):
        with pytest.raises(ConnectionError):
            run_as_worker(t, True)
    assert br.state == "open"
    n = len(ran)
    with pytest.raises(Retry) as ei:
        run_as_worker(t, False)
    assert len(ran) == n                 # refused: the block did not run
    assert 30.0 <= ei.value.when <= 30.0 * 1.25 + 0.01
    c = br.info()["counters"]
    assert c["successes"] == 1 and c["failures"] == 2


def test_context_form_check_retries_on_a_cooling_response(app):
    @app.task(bind=True, max_retries=None)
    def t(self):
        with retry_on_refusal(self) as guard:
            return guard.check(FakeResponse(429, {"Retry-After": "4"}))

    with pytest.raises(Retry) as ei:
        run_as_worker(t)
    assert ei.value.when == pytest.approx(4.0)


def test_retry_countdown_of_things():
    assert retry_countdown(breakerd.Cooling(wait=2.5, cause="cooling", breaker="a")) == 2.5
    assert retry_countdown(FakeResponse(429, {"Retry-After": "9"})) == 9.0
    assert retry_countdown(FakeResponse(200)) is None
    assert retry_countdown(ValueError("x")) is None


def test_decorator_with_a_breaker_runs_the_task_under_it(app, seg):
    br = seg.breaker("cel/deco", failure_threshold=1, open="20s")
    ran = []

    @app.task(bind=True, max_retries=None)
    @retry_on_refusal(br)
    def t(self, fail):
        ran.append(fail)
        if fail:
            raise TimeoutError("slow upstream")
        return "ok"

    assert run_as_worker(t, False) == "ok"
    with pytest.raises(TimeoutError):
        run_as_worker(t, True)
    assert br.state == "open"
    with pytest.raises(Retry) as ei:
        run_as_worker(t, False)
    assert ran == [False, True]
    assert 20.0 * 0.9 <= ei.value.when <= 20.0 * 1.25 + 0.01
    c = br.info()["counters"]
    assert c["failures_by_reason"]["timeout"] == 1 and c["successes"] == 1


def test_decorator_with_a_breaker_chooser(app, seg):
    chosen = []

    def pick(task, region):
        chosen.append(region)
        return seg.breaker("cel/" + region)

    @app.task(bind=True, max_retries=None)
    @retry_on_refusal(pick)
    def t(self, region):
        return region

    assert run_as_worker(t, "eu") == "eu"
    assert chosen == ["eu"]
    assert seg.breaker("cel/eu").info()["counters"]["successes"] == 1
