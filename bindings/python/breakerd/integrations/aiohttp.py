"""aiohttp: a ClientSession wrapper that puts every request through a shared
breaker (aiohttp 3.8 has trace configs, which cannot refuse a request, and
no client middleware; so the wrapper decides before calling the session)::

    import breakerd
    from breakerd.integrations.aiohttp import BreakerSession

    async with BreakerSession(breaker_kwargs={"failure_threshold": 5}) as s:
        try:
            async with s.get("https://api.example/charge") as r:
                body = await r.text()
        except breakerd.Refused as e:   # not sent: e.wait, e.cause, e.breaker
            ...

``get/post/put/patch/delete/head/options/request`` are the session's (each
usable with ``await`` or ``async with``). Per request: the breaker is
``name(method, url)`` if a naming function was given, else one per
upstream, ``<scheme>/<host>:<port>``; a refusal raises the Refused
subclass before the session is called (no connection is opened); a
response is reported with ``Permit.report_http(status, headers)`` when its
headers are in (the library's classifier, Retry-After included);
asyncio.TimeoutError counts as failure ``timeout``, aiohttp's
ClientConnectionError (refused, reset, disconnected) and ClientPayloadError
as failure ``connect``, aiohttp.InvalidURL as a rejected request; anything
else (cancellation) cancels the permit. The exception is re-raised
unchanged.

``seg``: a Segment, a segment name or None ($BREAKERD_SHM, else
/breakerd). ``session``: an aiohttp.ClientSession to wrap (else one is
made with ``session_kwargs``; closed by close()).
"""

import asyncio
import os
import threading

import aiohttp

import breakerd
from ._naming import host_breaker_name

__all__ = ["BreakerSession"]


class _RequestContext:
    """What session.get() returns: await it (the response) or use it with
    ``async with`` (the response, released at the end)."""

    __slots__ = ("_coro", "_resp")

    def __init__(self, coro):
        self._coro = coro
        self._resp = None

    def __await__(self):
        return self._coro.__await__()

    async def __aenter__(self):
        self._resp = await self._coro
        return self._resp

    async def __aexit__(self, *exc):
        self._resp.release()
        return False


class BreakerSession:
    """An aiohttp.ClientSession whose requests run under shared breakers."""

    def __init__(self, seg=None, *, name=None, breaker_kwargs=None, prefix=None,
                 session=None, **session_kwargs):
        if name is not None and not callable(name):
            raise TypeError("name: a callable(method, url) -> str or None, not %r" % (name,))
        self._seg_arg = seg
        self._name_fn = name
        self._prefix = prefix
        self._kwargs = dict(breaker_kwargs or {})
        self._own = session is None
        self._session = session if session is not None else aiohttp.ClientSession(**session_kwargs)
        self._lock = threading.Lock()
        self._pid = None
        self._seg = None
        self._cache = {}

    @property
    def session(self):
        return self._session

    def _segment(self):
        if not isinstance(self._seg_arg, (str, type(None))):
            return self._seg_arg
        if self._seg is None or self._pid != os.getpid():
            self._seg = breakerd.attach(self._seg_arg)
            self._pid = os.getpid()
            self._cache = {}
        return self._seg

    def breaker_name(self, method, url):
        if self._name_fn is not None:
            return self._name_fn(method, str(url))
        return host_breaker_name(str(url), self._prefix)

    def breaker_for(self, method, url):
        name = self.breaker_name(method, url)
        with self._lock:
            seg = self._segment()
            br = self._cache.get(name)
            if br is None:
                br = self._cache[name] = seg.breaker(name, **self._kwargs)
            return br

    async def _request(self, method, url, **kwargs):
        permit = self.breaker_for(method, url).acquire()  # refuses before connecting
        try:
            resp = await self._session.request(method, url, **kwargs)
        except asyncio.TimeoutError:
            permit.failure(reason="timeout")
            raise
        except aiohttp.InvalidURL:
            permit.rejected()
            raise
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError):
            permit.failure(reason="connect")
            raise
        except BaseException:
            permit.cancel()
            raise
        try:
            permit.report_http(resp.status, resp.headers)
        except BaseException:
            permit.cancel()
            resp.release()
            raise
        return resp

    def request(self, method, url, **kwargs):
        return _RequestContext(self._request(method, url, **kwargs))

    def get(self, url, **kwargs):
        return self.request("GET", url, **kwargs)

    def post(self, url, **kwargs):
        return self.request("POST", url, **kwargs)

    def put(self, url, **kwargs):
        return self.request("PUT", url, **kwargs)

    def patch(self, url, **kwargs):
        return self.request("PATCH", url, **kwargs)

    def delete(self, url, **kwargs):
        return self.request("DELETE", url, **kwargs)

    def head(self, url, **kwargs):
        return self.request("HEAD", url, **kwargs)

    def options(self, url, **kwargs):
        return self.request("OPTIONS", url, **kwargs)

    async def close(self):
        if self._own:
            await self._session.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()
        return False
