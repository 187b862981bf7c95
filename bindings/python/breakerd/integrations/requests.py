"""A requests transport adapter that puts every request through a shared breaker.

::

    import requests, breakerd
    from breakerd.integrations.requests import BreakerAdapter

    seg = breakerd.attach()
    s = requests.Session()
    adapter = BreakerAdapter(seg, breaker_kwargs={"failure_threshold": 5, "open": "30s"})
    s.mount("http://", adapter)
    s.mount("https://", adapter)
    try:
        r = s.get("https://api.example/charge", timeout=5)
    except breakerd.Refused as e:      # CircuitOpen, Cooling, BulkheadFull
        ...                            # not sent; e.wait seconds, e.cause, e.breaker

What is counted, per request (``send``):

- the breaker is chosen before anything else: ``name(request)`` if a naming
  function was given, else one per upstream, ``<scheme>/<host>:<port>`` (see
  :func:`host_breaker_name`);
- a refusal raises the package's :class:`breakerd.Refused` subclass *before*
  the connection pool is touched: no socket is opened, no byte is sent. The
  exception gets ``.request`` (the PreparedRequest) set;
- a response is reported with ``Permit.report_http(status, headers)``: the
  library's classifier (``breakerd.classify_http``) decides -- 1xx-3xx
  success, 404 a healthy error, 408/504 failure ``timeout``, 429
  ``rate_limited``, 503/529 ``overloaded``, other 5xx ``server_error``, other
  4xx rejected requests (counted neither way); a failure's Retry-After
  (seconds or an HTTP date) up to the breaker's ``max_wait`` cools every
  process sharing the segment, a longer one opens the breaker for that long;
- ``ConnectTimeout``/``ReadTimeout`` count as failure ``timeout``, any other
  ``requests.ConnectionError`` (refused, reset, DNS, TLS, proxy) as failure
  ``connect``; the exception is re-raised unchanged;
- requests' "bad request" errors raised before sending (``InvalidURL``,
  ``InvalidHeader``, ``InvalidSchema``, ``MissingSchema``, ``InvalidJSONError``)
  are rejected requests (our fault, counted neither way); any other exception
  (KeyboardInterrupt, a bug) cancels the permit: it frees the lease and
  counts nothing.

The permit is held while ``HTTPAdapter.send`` runs (until the response
headers are in, also with ``stream=True``), so a bulkhead
(``max_concurrent``) limits requests in flight and ``slow_call`` sees the
time to the headers. Keep ``max_retries`` at its default (0): urllib3 retries
inside one ``send`` reach the upstream without passing the breaker again.

Thread- and process-safety: one adapter may serve many threads (the breaker
cache is guarded by a lock; permits are per call). In a pre-fork server,
create the adapter before or after the fork; when ``seg`` is a segment name
(or None for the default ``$BREAKERD_SHM`` / ``/breakerd``) each process
attaches on its first request, so nothing attached in a parent is used by
its children.
"""

import os
import threading

import requests
import requests.adapters
import requests.exceptions

import breakerd
from ._naming import NAME_MAX, host_breaker_name

__all__ = ["BreakerAdapter", "host_breaker_name", "NAME_MAX"]

# Raised by requests before any byte leaves: the request is malformed, the
# upstream is not to blame.
_REJECTED = (
    requests.exceptions.InvalidURL,
    requests.exceptions.InvalidHeader,
    requests.exceptions.InvalidSchema,
    requests.exceptions.MissingSchema,
    getattr(requests.exceptions, "InvalidJSONError", requests.exceptions.InvalidURL),
    requests.exceptions.URLRequired,
)



class BreakerAdapter(requests.adapters.HTTPAdapter):
    """HTTPAdapter whose ``send`` runs under a shared breakerd breaker.

    ``seg``: a segment from ``breakerd.attach()``, or a segment name (str) or
    None: then each process attaches on its first request (pre-fork safe).
    ``name``: None (a breaker per upstream host, see
    :func:`host_breaker_name`) or a callable ``name(prepared_request) -> str``
    returning a valid breaker name (1-63 bytes of ``[A-Za-z0-9._:/-]``; an
    invalid one raises the package's ValueError before sending).
    ``breaker_kwargs``: settings for ``seg.breaker(name, **breaker_kwargs)``;
    they apply only to breakers this call creates (as in the library).
    ``prefix``: an optional first name level above the per-host names
    (``<prefix>/<scheme>/<host>:<port>``; default none).
    Remaining keyword arguments go to ``HTTPAdapter`` (pool sizes ...).
    """

    def __init__(self, seg=None, name=None, breaker_kwargs=None, prefix=None, **kwargs):
        if name is not None and not callable(name):
            raise TypeError("name: a callable(request) -> str or None, not %r" % (name,))
        self._seg_arg = seg
        self._name_fn = name
        self._prefix = prefix
        self._breaker_kwargs = dict(breaker_kwargs or {})
        self._lock = threading.Lock()
        self._pid = None
        self._seg = None
        self._breakers = {}
        super().__init__(**kwargs)

    # HTTPAdapter pickles its attributes for multiprocessing; ours are
    # process-local and rebuilt on first use.
    __attrs__ = requests.adapters.HTTPAdapter.__attrs__ + [
        "_seg_arg", "_name_fn", "_prefix", "_breaker_kwargs"]

    def __setstate__(self, state):
        self._lock = threading.Lock()
        self._pid = None
        self._seg = None
        self._breakers = {}
        super().__setstate__(state)

    def _segment(self):
        if not isinstance(self._seg_arg, (str, type(None))):
            return self._seg_arg
        pid = os.getpid()
        if self._seg is None or self._pid != pid:
            self._seg = breakerd.attach(self._seg_arg)
            self._pid = pid
            self._breakers = {}
        return self._seg

    def breaker_name(self, request):
        """The breaker name ``request`` is counted under."""
        if self._name_fn is not None:
            return self._name_fn(request)
        return host_breaker_name(request.url, self._prefix)

    def breaker_for(self, request):
        """The breaker object for ``request`` (created on first use)."""
        name = self.breaker_name(request)
        with self._lock:
            seg = self._segment()
            br = self._breakers.get(name)
            if br is None:
                br = seg.breaker(name, **self._breaker_kwargs)
                self._breakers[name] = br
            return br

    def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
        br = self.breaker_for(request)
        try:
            permit = br.acquire()
        except breakerd.Refused as refusal:
            try:
                refusal.request = request
            except AttributeError:
                pass
            raise
        try:
            response = super().send(request, stream=stream, timeout=timeout,
                                    verify=verify, cert=cert, proxies=proxies)
        except requests.exceptions.Timeout:
            # ConnectTimeout is also a ConnectionError: test Timeout first.
            permit.failure(reason="timeout")
            raise
        except requests.exceptions.ConnectionError:
            permit.failure(reason="connect")
            raise
        except _REJECTED:
            permit.rejected()
            raise
        except BaseException:
            permit.cancel()
            raise
        try:
            permit.report_http(response.status_code, response.headers)
        except BaseException:
            permit.cancel()
            raise
        return response
