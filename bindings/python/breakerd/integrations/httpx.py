"""httpx transports (sync and async) that put every request through a shared
breaker::

    import httpx, breakerd
    from breakerd.integrations.httpx import BreakerTransport, AsyncBreakerTransport

    client = httpx.Client(transport=BreakerTransport(
        breaker_kwargs={"failure_threshold": 5, "open": "30s"}))
    async_client = httpx.AsyncClient(transport=AsyncBreakerTransport())
    try:
        r = client.get("https://api.example/charge")
    except breakerd.Refused as e:      # not sent: e.wait, e.cause, e.breaker
        ...

Per request: the breaker is ``name(request)`` if a naming function was
given, else one per upstream, ``<scheme>/<host>:<port>``
(breakerd.integrations.requests.host_breaker_name); a refusal raises the
Refused subclass before the inner transport is called (no connection is
opened); a response is reported with ``Permit.report_http(status,
headers)`` once its headers are in (the library's classifier: 429/503 with
Retry-After cool every process, ...); httpx.TimeoutException counts as
failure ``timeout``, any other httpx.TransportError (connect, read, write,
protocol, proxy) as failure ``connect``; httpx.UnsupportedProtocol /
InvalidURL as a rejected request; anything else (KeyboardInterrupt,
asyncio cancellation) cancels the permit. The exception is re-raised
unchanged. The permit is held until the response headers arrive, so a
bulkhead limits requests in flight.

``seg``: a Segment, a segment name or None ($BREAKERD_SHM, else
/breakerd; attached per process on first use). ``transport``: the inner
transport (default httpx.HTTPTransport / AsyncHTTPTransport with
``transport_kwargs``).
"""

import os
import threading

import httpx

import breakerd
from ._naming import host_breaker_name

__all__ = ["BreakerTransport", "AsyncBreakerTransport"]

_REJECTED = tuple(c for c in (getattr(httpx, "UnsupportedProtocol", None),
                              getattr(httpx, "InvalidURL", None),
                              getattr(httpx, "LocalProtocolError", None)) if c)


class _Breakers:
    """The breaker per name, per process."""

    def __init__(self, seg, name, breaker_kwargs, prefix):
        if name is not None and not callable(name):
            raise TypeError("name: a callable(request) -> str or None, not %r" % (name,))
        self._seg_arg = seg
        self._name_fn = name
        self._prefix = prefix
        self._kwargs = dict(breaker_kwargs or {})
        self._lock = threading.Lock()
        self._pid = None
        self._seg = None
        self._cache = {}

    def _segment(self):
        if not isinstance(self._seg_arg, (str, type(None))):
            return self._seg_arg
        if self._seg is None or self._pid != os.getpid():
            self._seg = breakerd.attach(self._seg_arg)
            self._pid = os.getpid()
            self._cache = {}
        return self._seg

    def name(self, request):
        if self._name_fn is not None:
            return self._name_fn(request)
        return host_breaker_name(str(request.url), self._prefix)

    def get(self, request):
        name = self.name(request)
        with self._lock:
            seg = self._segment()
            br = self._cache.get(name)
            if br is None:
                br = self._cache[name] = seg.breaker(name, **self._kwargs)
            return br


def _acquire(breakers, request):
    try:
        return breakers.get(request).acquire()
    except breakerd.Refused as refusal:
        refusal.request = request
        raise


def _report_error(permit, exc):
    if isinstance(exc, httpx.TimeoutException):
        permit.failure(reason="timeout")
    elif _REJECTED and isinstance(exc, _REJECTED):
        permit.rejected()
    elif isinstance(exc, httpx.TransportError):
        permit.failure(reason="connect")
    else:
        permit.cancel()


def _report_response(permit, response):
    try:
        permit.report_http(response.status_code, response.headers)
    except BaseException:
        permit.cancel()
        raise


class BreakerTransport(httpx.BaseTransport):
    """An httpx transport whose requests run under shared breakers."""

    def __init__(self, seg=None, name=None, breaker_kwargs=None, prefix=None,
                 transport=None, **transport_kwargs):
        self._breakers = _Breakers(seg, name, breaker_kwargs, prefix)
        self._inner = transport if transport is not None else httpx.HTTPTransport(**transport_kwargs)

    def breaker_for(self, request):
        return self._breakers.get(request)

    def handle_request(self, request):
        permit = _acquire(self._breakers, request)
        try:
            response = self._inner.handle_request(request)
        except BaseException as e:
            _report_error(permit, e)
            raise
        _report_response(permit, response)
        return response

    def close(self):
        self._inner.close()


class AsyncBreakerTransport(httpx.AsyncBaseTransport):
    """The asyncio form of BreakerTransport (httpx.AsyncClient)."""

    def __init__(self, seg=None, name=None, breaker_kwargs=None, prefix=None,
                 transport=None, **transport_kwargs):
        self._breakers = _Breakers(seg, name, breaker_kwargs, prefix)
        self._inner = (transport if transport is not None
                       else httpx.AsyncHTTPTransport(**transport_kwargs))

    def breaker_for(self, request):
        return self._breakers.get(request)

    async def handle_async_request(self, request):
        permit = _acquire(self._breakers, request)
        try:
            response = await self._inner.handle_async_request(request)
        except BaseException as e:
            _report_error(permit, e)
            raise
        _report_response(permit, response)
        return response

    async def aclose(self):
        await self._inner.aclose()
