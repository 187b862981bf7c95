"""Breaker names for HTTP clients' integrations (requests, httpx,
aiohttp): one breaker per upstream, ``<scheme>/<host>:<port>``."""

import hashlib
import urllib.parse

__all__ = ["host_breaker_name", "NAME_MAX"]

#: longest breaker name the library accepts, in bytes (docs/guide/c.md "States and settings": names are
#: 1-63 bytes of [A-Za-z0-9._:/-])
NAME_MAX = 63
_NAME_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:/-")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def host_breaker_name(url, prefix=None):
    """Breaker name for the upstream of ``url``: ``<scheme>/<host>:<port>``,
    or ``<prefix>/<scheme>/<host>:<port>`` with a ``prefix`` (a name level
    of your own: ``br.trip`` of ``payments`` then refuses every host under
    it, as the library's hierarchy does).

    The host is lower-cased (an internationalised one IDNA-encoded,
    ``xn--...``), the port is the URL's or the scheme's default (80, 443),
    so ``http://API.example`` and ``http://api.example:80/x`` share one
    breaker while two ports of one host do not. An IPv6 literal keeps its
    colons (``http/::1:8080``). If a byte outside ``[A-Za-z0-9._:/-]`` had
    to become ``_``, or the name is longer than 63 bytes, it is cut to 52
    bytes and ends in ``.`` plus the first 10 hex digits of the SHA-1 of the
    full name, so two upstreams never share a breaker by accident. Raises
    ValueError for a URL without a host or with a bad port.
    """
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname
    if not host:
        raise ValueError("url: no host in %r" % (url,))
    try:
        port = parts.port
    except ValueError as e:
        raise ValueError("url: %s" % e) from None
    if port is None:
        port = _DEFAULT_PORTS.get(parts.scheme.lower(), 0)
    host = host.lower()
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            pass
    scheme = parts.scheme.lower() or "http"
    raw = "%s/%s:%d" % (scheme, host, port)
    if prefix:
        raw = "%s/%s" % (prefix, raw)
    name = "".join(c if c in _NAME_CHARS else "_" for c in raw)
    if name != raw or len(name) > NAME_MAX:
        digest = hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()[:10]
        name = name[:NAME_MAX - 11] + "." + digest
    return name
