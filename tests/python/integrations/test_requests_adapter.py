"""BreakerAdapter against real requests and a real loopback HTTP server."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fleet"))

from pyint_fixtures import seg, shm_name, upstream  # noqa: E402,F401


import socket
import threading
import time

import pytest
import requests

import breakerd
from breakerd.integrations.requests import BreakerAdapter, host_breaker_name, NAME_MAX

import upstream as U

FAST = {"failure_threshold": 3, "open": "30s", "max_wait": "5s"}


def session_for(seg, **kw):
    s = requests.Session()
    a = BreakerAdapter(seg, **kw)
    s.mount("http://", a)
    s.mount("https://", a)
    return s, a


def counters(br):
    """The counters of ``bctl inspect --json`` (``info()["counters"]``)."""
    return br.info()["counters"]


# -- names ---------------------------------------------------------------

@pytest.mark.parametrize("url,name", [
    ("http://api.example/x", "http/api.example:80"),
    ("https://API.Example/x?y=1", "https/api.example:443"),
    ("https://api.example:80/", "https/api.example:80"),
    ("http://api.example:8080/", "http/api.example:8080"),
    ("http://user:pw@10.0.0.1:81/", "http/10.0.0.1:81"),
    ("http://[::1]:9000/", "http/::1:9000"),
    ("http://b\u00fccher.example/", "http/xn--bcher-kva.example:80"),
])
def test_host_breaker_name_is_per_upstream_and_valid(seg, url, name):
    got = host_breaker_name(url)
    assert got == name
    seg.breaker(got)  # the library accepts it


def test_host_breaker_name_prefix_is_a_level_above_the_hosts(seg, upstream):
    assert host_breaker_name("https://a.example/", "payments") == "payments/https/a.example:443"
    s, a = session_for(seg, prefix="payments", breaker_kwargs=FAST)
    assert s.get(upstream.url, timeout=5).status_code == 200
    seg.breaker("payments").trip(for_="30s")       # the ancestor refuses every host
    with pytest.raises(breakerd.CircuitOpen) as ei:
        s.get(upstream.url, timeout=5)
    assert ei.value.breaker == "payments"
    assert upstream.connections == 1


def test_host_breaker_name_long_hosts_stay_distinct_and_short(seg):
    a = host_breaker_name("http://" + "a" * 80 + ".example/")
    b = host_breaker_name("http://" + "a" * 80 + ".example2/")
    assert a != b
    assert len(a) <= NAME_MAX and len(b) <= NAME_MAX
    seg.breaker(a)
    seg.breaker(b)


def test_host_breaker_name_replaced_bytes_get_a_digest(seg):
    a = host_breaker_name("http://a%2Ab.example/")     # '%' is no name byte
    b = host_breaker_name("http://a%2Bb.example/")
    assert a != b
    assert a.startswith("http/a_2ab.example:80.") and len(a) <= NAME_MAX
    seg.breaker(a)


def test_host_breaker_name_without_host_is_an_error():
    with pytest.raises(ValueError):
        host_breaker_name("file:///etc/passwd")


# -- outcomes ------------------------------------------------------------

def test_success_is_counted_on_the_hosts_breaker(seg, upstream):
    s, a = session_for(seg, breaker_kwargs=FAST)
    r = s.get(upstream.url + "/ok", timeout=5)
    assert r.status_code == 200
    br = seg.breaker(host_breaker_name(upstream.url))
    c = counters(br)
    assert br.state == "closed"
    assert c["allowed"] == 1 and c["successes"] == 1


def test_server_errors_open_the_breaker_and_refusal_opens_no_socket(seg, upstream):
    s, a = session_for(seg, breaker_kwargs=FAST)
    upstream.set(U.down())
    for _ in range(3):
        assert s.get(upstream.url + "/x", timeout=5).status_code == 503
    br = seg.breaker(host_breaker_name(upstream.url))
    assert br.state == "open"
    before = upstream.connections
    assert before == 3
    with pytest.raises(breakerd.CircuitOpen) as ei:
        s.get(upstream.url + "/x", timeout=5)
    assert ei.value.wait > 0
    assert ei.value.breaker == br.name
    assert ei.value.request.url.endswith("/x")
    time.sleep(0.2)  # a connection would have been accepted by now
    assert upstream.connections == before
    assert len(upstream.requests) == 3


def test_refused_request_opens_no_socket_on_a_bare_listener(seg):
    # A plain listening socket that only counts accepted connections.
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(16)
    lsock.settimeout(0.05)
    port = lsock.getsockname()[1]
    accepted = []
    stop = threading.Event()

    def acceptor():
        while not stop.is_set():
            try:
                c, _ = lsock.accept()
            except socket.timeout:
                continue
            accepted.append(1)
            c.close()

    t = threading.Thread(target=acceptor, daemon=True)
    t.start()
    try:
        url = "http://127.0.0.1:%d/" % port
        br = seg.breaker(host_breaker_name(url), **FAST)
        br.trip(for_="60s")
        s, a = session_for(seg)
        for _ in range(5):
            with pytest.raises(breakerd.Refused):
                s.get(url, timeout=2)
        time.sleep(0.3)
        assert accepted == []
    finally:
        stop.set()
        t.join(2)
        lsock.close()


def test_429_retry_after_cools_and_refuses_without_sending(seg, upstream):
    # a 429 stays a failure with its cooling: the implicit pace off
    s, a = session_for(seg, breaker_kwargs=dict(FAST, implicit_pace=False))
    upstream.set(U.rate_limited(2))
    r = s.get(upstream.url + "/x", timeout=5)
    assert r.status_code == 429
    upstream.set(U.UP)
    with pytest.raises(breakerd.Cooling) as ei:
        s.get(upstream.url + "/x", timeout=5)
    assert 1.0 < ei.value.wait <= 2.0 + 0.5 + 0.1  # remaining + jitter <= remaining/4
    assert upstream.connections == 1
    c = counters(seg.breaker(host_breaker_name(upstream.url)))
    assert c["failures_by_reason"]["rate_limited"] == 1
    assert c["rejected_cooling"] == 1


def test_retry_after_longer_than_max_wait_opens_the_breaker(seg, upstream):
    # every cooling is capped at max_open (issue 22)
    s, a = session_for(seg, breaker_kwargs=dict(FAST, max_wait="1s", max_open="2h"))
    upstream.set(U.rate_limited(3600))
    assert s.get(upstream.url + "/x", timeout=5).status_code == 429
    br = seg.breaker(host_breaker_name(upstream.url))
    assert br.state == "open"
    with pytest.raises(breakerd.CircuitOpen) as ei:
        s.get(upstream.url + "/x", timeout=5)
    assert ei.value.wait > 3000
    assert upstream.connections == 1


COUNTER_OF = {"success": "successes", "healthy_error": "healthy_errors",
              "rejected_request": "ignored", "failure": "failures"}


@pytest.mark.parametrize("status", [200, 204, 301, 400, 401, 404, 408, 409, 429, 500, 502, 503, 504, 529, 799])
def test_outcome_follows_the_library_classifier(seg, upstream, status):
    """Each status is counted as breakerd.classify_http (the C classifier) says."""
    s, a = session_for(seg, breaker_kwargs={"failure_threshold": 100,
                                            "implicit_pace": False})
    br = seg.breaker(host_breaker_name(upstream.url), implicit_pace=False)
    outcome, reason, _ = breakerd.classify_http(status)
    upstream.set(lambda rec: (status, {"Location": "/elsewhere"} if status == 301 else {}))
    r = s.get(upstream.url, timeout=5, allow_redirects=False)
    assert r.status_code == status
    c = counters(br)
    assert c[COUNTER_OF[outcome]] == 1, (status, outcome, c)
    others = set(COUNTER_OF.values()) - {COUNTER_OF[outcome]}
    assert all(c[k] == 0 for k in others), (status, outcome, c)
    if outcome == "failure":
        assert c["failures_by_reason"][reason] == 1


def test_usual_statuses_classify_as_expected():
    assert breakerd.classify_http(200)[:2] == ("success", "none")
    assert breakerd.classify_http(503)[0] == "failure"
    assert breakerd.classify_http(500)[:2] == ("failure", "server_error")
    assert breakerd.classify_http(429, "7") == ("failure", "rate_limited", 7.0)


def test_connection_refused_is_a_connect_failure_and_re_raised(seg):
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nobody listens there now
    url = "http://127.0.0.1:%d/" % port
    s, a = session_for(seg, breaker_kwargs=FAST)
    for _ in range(3):
        with pytest.raises(requests.ConnectionError):
            s.get(url, timeout=2)
    br = seg.breaker(host_breaker_name(url))
    assert br.state == "open"
    c = counters(br)
    assert c["failures"] == 3
    assert c["failures_by_reason"]["connect"] == 3
    with pytest.raises(breakerd.CircuitOpen):
        s.get(url, timeout=2)


def test_read_timeout_is_a_timeout_failure_and_re_raised(seg, upstream):
    release = threading.Event()
    upstream.set(U.held(release, status=200, limit=5))
    s, a = session_for(seg, breaker_kwargs=FAST)
    try:
        with pytest.raises(requests.ReadTimeout):
            s.get(upstream.url + "/slow", timeout=0.2)
    finally:
        release.set()
    c = counters(seg.breaker(host_breaker_name(upstream.url)))
    assert c["failures"] == 1
    assert c["failures_by_reason"]["timeout"] == 1


def test_invalid_request_is_not_a_failure(seg, upstream):
    # requests refuses the header while preparing or in send: either way the
    # upstream is not to blame and nothing reaches it.
    s, a = session_for(seg, breaker_kwargs=FAST)
    for _ in range(5):
        with pytest.raises(requests.exceptions.InvalidHeader):
            s.get(upstream.url, headers={"X-Bad": "a\nb"}, timeout=2)
    br = seg.breaker(host_breaker_name(upstream.url))
    assert br.state == "closed"
    assert counters(br)["failures"] == 0
    assert upstream.connections == 0


def test_naming_function_chooses_the_breaker(seg, upstream):
    s, a = session_for(seg, name=lambda req: "svc/" + req.path_url.strip("/").split("/")[0],
                       breaker_kwargs=FAST)
    upstream.set(U.down())
    for _ in range(3):
        s.get(upstream.url + "/billing/1", timeout=5)
    assert seg.breaker("svc/billing").state == "open"
    upstream.set(U.UP)
    assert s.get(upstream.url + "/search/1", timeout=5).status_code == 200
    with pytest.raises(breakerd.CircuitOpen):
        s.get(upstream.url + "/billing/2", timeout=5)


def test_invalid_name_from_the_naming_function_sends_nothing(seg, upstream):
    s, a = session_for(seg, name=lambda req: "bad name!")
    with pytest.raises(ValueError):
        s.get(upstream.url, timeout=2)
    assert upstream.connections == 0


def test_naming_function_must_be_callable(seg):
    with pytest.raises(TypeError):
        BreakerAdapter(seg, name="http/x")


def test_stream_true_reports_at_the_headers(seg, upstream):
    s, a = session_for(seg, breaker_kwargs=FAST)
    with s.get(upstream.url, stream=True, timeout=5) as r:
        assert r.status_code == 200
        br = seg.breaker(host_breaker_name(upstream.url))
        assert counters(br)["successes"] == 1
        assert r.content == b"ok\n"


def test_segment_by_name_attaches_lazily(shm_name, upstream):
    s = requests.Session()
    s.mount("http://", BreakerAdapter(shm_name, breaker_kwargs=FAST))
    assert s.get(upstream.url, timeout=5).status_code == 200
    with breakerd.attach(shm_name) as seg:
        assert counters(seg.breaker(host_breaker_name(upstream.url)))["successes"] == 1


def test_threads_share_one_adapter_and_lose_no_count(seg, upstream):
    s, a = session_for(seg, breaker_kwargs={"failure_threshold": 1000},
                       pool_maxsize=8)
    n_threads, per = 8, 25
    errors = []

    def work():
        try:
            for _ in range(per):
                s.get(upstream.url, timeout=10)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert errors == []
    c = counters(seg.breaker(host_breaker_name(upstream.url)))
    assert c["successes"] == n_threads * per
    assert c["allowed"] == n_threads * per
    assert len(upstream.requests) == n_threads * per


def test_adapter_by_segment_name_pickles_and_works_after(shm_name, upstream):
    import pickle
    a = BreakerAdapter(shm_name, breaker_kwargs=FAST)
    s = requests.Session()
    s.mount("http://", a)
    assert s.get(upstream.url, timeout=5).status_code == 200
    s2 = pickle.loads(pickle.dumps(s))
    assert s2.get(upstream.url, timeout=5).status_code == 200
    with breakerd.attach(shm_name) as seg:
        assert counters(seg.breaker(host_breaker_name(upstream.url)))["successes"] == 2


def test_refusal_is_not_sent_even_with_urllib3_retries(seg, upstream):
    # max_retries lives inside one send(): the permit is taken once, before.
    s, a = session_for(seg, breaker_kwargs=FAST, max_retries=3)
    seg.breaker(host_breaker_name(upstream.url), **FAST).trip(for_="30s")
    with pytest.raises(breakerd.CircuitOpen):
        s.get(upstream.url, timeout=5)
    assert upstream.connections == 0
