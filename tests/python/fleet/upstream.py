"""A controllable HTTP upstream on loopback for the integration and fleet tests.

``Upstream()`` starts a ``ThreadingHTTPServer`` on 127.0.0.1 (a port the
kernel picks) in a daemon thread of the test process. Every answer closes
its connection (HTTP/1.0), so each request is one accepted connection and
``connections`` counts sockets the clients opened.

The test steers it with ``set(policy)``: ``policy(rec)`` gets the request
record (a dict: ``path``, ``pid`` and ``task`` from the ``X-Worker-Pid`` /
``X-Task-Id`` headers, ``t`` arrival on ``time.monotonic()``) and returns
``(status, headers_dict)`` -- or sleeps/blocks first (it runs in the
request's own thread). Ready-made policies: ``UP``, ``down(delay)``,
``rate_limited(retry_after)``, ``held(event)``.

Recorded, under ``lock``: ``requests`` (every record, with ``status`` and
``t_done`` once answered), ``connections``, ``inflight``, ``max_inflight``
(``reset_max()`` restarts it from the current in-flight count).
``close()`` stops it; it is also a context manager.
"""

import http.server
import threading
import time

UP = None  # the default policy: 200 "ok"


def _up(rec):
    return 200, {}


def down(delay=0.0, status=503):
    def policy(rec):
        if delay:
            time.sleep(delay)
        return status, {}
    return policy


def rate_limited(retry_after, status=429):
    def policy(rec):
        return status, {"Retry-After": str(retry_after)}
    return policy


def held(release, status=503, limit=20.0):
    """Block each request until ``release`` (a threading.Event) is set or ``limit`` s."""
    def policy(rec):
        release.wait(limit)
        return status, {}
    return policy


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def get_request(self):
        conn = super().get_request()
        with self.owner.lock:
            self.owner.connections += 1
        return conn


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def do_GET(self):
        up = self.server.owner
        rec = {"t": time.monotonic(), "wall": time.time(), "path": self.path,
               "pid": self.headers.get("X-Worker-Pid"),
               "task": self.headers.get("X-Task-Id"),
               "status": None, "t_done": None}
        with up.lock:
            up.requests.append(rec)
            up.inflight += 1
            up.max_inflight = max(up.max_inflight, up.inflight)
            policy = up.policy
        try:
            status, headers = (policy or _up)(rec)
        finally:
            with up.lock:
                up.inflight -= 1
        body = b"ok\n" if status < 400 else b"error\n"
        try:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the client died (kill -9) or gave up
        with up.lock:
            rec["status"] = status
            rec["t_done"] = time.monotonic()

    do_POST = do_GET

    def log_message(self, *args):
        pass


class Upstream:
    def __init__(self, policy=UP):
        self.lock = threading.Lock()
        self.policy = policy
        self.requests = []
        self.connections = 0
        self.inflight = 0
        self.max_inflight = 0
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.owner = self
        self.port = self.server.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self._thread = threading.Thread(target=self.server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def set(self, policy):
        with self.lock:
            self.policy = policy

    def reset_max(self):
        with self.lock:
            self.max_inflight = self.inflight

    def snapshot(self):
        with self.lock:
            return [dict(r) for r in self.requests]

    def count(self, since=None, until=None):
        with self.lock:
            return sum(1 for r in self.requests
                       if (since is None or r["t"] >= since) and (until is None or r["t"] < until))

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
