"""httpx (sync, async) and aiohttp integrations (issue 24 scope 4): one
breaker per upstream, status and Retry-After classified by the library,
connection errors counted, and a refusal raised before any connection
opens -- proven by a listening socket that counts zero accepts."""

import asyncio
import http.server
import socket
import threading

import pytest

import breakerd

httpx = pytest.importorskip("httpx")
aiohttp = pytest.importorskip("aiohttp")

from breakerd.integrations.aiohttp import BreakerSession  # noqa: E402
from breakerd.integrations.httpx import AsyncBreakerTransport, BreakerTransport  # noqa: E402


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        code = int(self.path.strip("/") or 200)
        self.send_response(code)
        if code == 429:
            self.send_header("Retry-After", "5")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *a):
        pass


@pytest.fixture
def upstream():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def counting_socket():
    """A listening socket that accepts and counts connections (and closes
    them): any connection attempt would show."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    s.settimeout(0.05)
    accepts = []
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            try:
                c, _ = s.accept()
            except OSError:
                continue
            accepts.append(1)
            c.close()
    t = threading.Thread(target=loop, daemon=True)
    t.start()
    yield s.getsockname()[1], accepts
    stop.set()
    t.join(2)
    s.close()


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def counters(seg, url):
    from breakerd.integrations.requests import host_breaker_name
    return seg.breaker(host_breaker_name(url)).info()


# ---- httpx, sync -----------------------------------------------------------

# implicit_pace off: the 429 stays a rate_limited failure whose Retry-After
# cools (by default the breaker's implicit pace takes it: see
# test_httpx_429_makes_the_implicit_pace)
NO_IPACE = {"implicit_pace": False}


def test_httpx_classifies_status_and_retry_after(realseg, upstream):
    with httpx.Client(transport=BreakerTransport(realseg, breaker_kwargs=NO_IPACE)) as c:
        assert c.get(upstream + "/200").status_code == 200
        assert c.get(upstream + "/503").status_code == 503
        assert c.get(upstream + "/429").status_code == 429
    info = counters(realseg, upstream)
    assert info["counters"]["successes"] == 1
    assert info["counters"]["failures"] == 2
    assert info["cool_until_remaining_ms"] > 0  # Retry-After: 5 cools every process
    with httpx.Client(transport=BreakerTransport(realseg)) as c:
        with pytest.raises(breakerd.Cooling):
            c.get(upstream + "/200")


def test_httpx_429_makes_the_implicit_pace(realseg, upstream):
    with httpx.Client(transport=BreakerTransport(realseg)) as c:
        assert c.get(upstream + "/429").status_code == 429
    info = counters(realseg, upstream)
    assert info["counters"]["failures"] == 0
    assert info["counters"]["throttled"] == 1
    assert info["cool_until_remaining_ms"] == 0
    assert info["implicit_pace_per_s"] > 0


def test_httpx_refusal_opens_no_connection(realseg, counting_socket):
    port, accepts = counting_socket
    url = f"http://127.0.0.1:{port}/"
    t = BreakerTransport(realseg)
    t.breaker_for(httpx.Request("GET", url)).trip(for_=60)
    with httpx.Client(transport=t) as c:
        for _ in range(5):
            with pytest.raises(breakerd.CircuitOpen) as ei:
                c.get(url)
            assert ei.value.request.url == url
    assert accepts == []


def test_httpx_connect_error_counts_as_failure(realseg):
    url = f"http://127.0.0.1:{closed_port()}/"
    with httpx.Client(transport=BreakerTransport(realseg, breaker_kwargs={"failure_threshold": 2})) as c:
        for _ in range(2):
            with pytest.raises(httpx.ConnectError):
                c.get(url)
        with pytest.raises(breakerd.CircuitOpen):
            c.get(url)
    assert counters(realseg, url)["counters"]["failures_by_reason"]["connect"] == 2


def test_httpx_naming_function(realseg, upstream):
    t = BreakerTransport(realseg, name=lambda req: "api/" + req.url.path.strip("/"))
    with httpx.Client(transport=t) as c:
        c.get(upstream + "/200")
    assert realseg.breaker("api/200").info()["counters"]["successes"] == 1


# ---- httpx, async ----------------------------------------------------------

def test_httpx_async_refusal_and_outcomes(realseg, upstream, counting_socket):
    port, accepts = counting_socket
    url = f"http://127.0.0.1:{port}/"

    async def main():
        t = AsyncBreakerTransport(realseg)
        async with httpx.AsyncClient(transport=t) as c:
            assert (await c.get(upstream + "/200")).status_code == 200
            assert (await c.get(upstream + "/503")).status_code == 503
            t.breaker_for(httpx.Request("GET", url)).trip(for_=60)
            with pytest.raises(breakerd.CircuitOpen):
                await c.get(url)

    asyncio.run(main())
    assert accepts == []
    c = counters(realseg, upstream)["counters"]
    assert (c["successes"], c["failures"]) == (1, 1)


# ---- aiohttp ---------------------------------------------------------------

def test_aiohttp_outcomes_retry_after_and_refusal(realseg, upstream, counting_socket):
    port, accepts = counting_socket
    url = f"http://127.0.0.1:{port}/"

    async def main():
        async with BreakerSession(realseg, breaker_kwargs=NO_IPACE) as s:
            async with s.get(upstream + "/200") as r:
                assert r.status == 200 and await r.text() == "ok"
            r = await s.get(upstream + "/503")
            assert r.status == 503
            r.release()
            s.breaker_for("GET", url).trip(for_=60)
            for _ in range(5):
                with pytest.raises(breakerd.CircuitOpen):
                    async with s.get(url):
                        pass
            async with s.get(upstream + "/429") as r:
                assert r.status == 429
            with pytest.raises(breakerd.Cooling):
                await s.get(upstream + "/200")

    asyncio.run(main())
    assert accepts == []
    info = counters(realseg, upstream)
    assert (info["counters"]["successes"], info["counters"]["failures"]) == (1, 2)
    assert info["cool_until_remaining_ms"] > 0


def test_aiohttp_connect_error_counts_as_failure(realseg):
    url = f"http://127.0.0.1:{closed_port()}/"

    async def main():
        async with BreakerSession(realseg) as s:
            with pytest.raises(aiohttp.ClientConnectionError):
                await s.get(url)

    asyncio.run(main())
    assert counters(realseg, url)["counters"]["failures_by_reason"]["connect"] == 1
