#!/usr/bin/env python3
"""metrics_http.py BREAKERD BCTL [PROMTOOL] - breakerd --metrics-listen.

A real HTTP client (http.client, and raw sockets for the hostile cases)
against a breakerd on loopback (port 0: the port is read from its log):
  - bad --metrics-listen values (no port, port 70000, bad address, an
    address in use): each a usage error (exit 2) naming the value, and
    the segment is not created;
  - GET /metrics: 200, Content-Type text/plain; version=0.0.4; the body
    is what `bctl metrics` prints (clock-dependent gauges masked);
    worker processes (bctl exec) change records and the next scrape
    shows it, including a bulkhead permit held while it is held;
  - HEAD: same headers, no body; 404 for other paths; 405 with
    "Allow: GET, HEAD" for other methods;
  - promtool check metrics on both the body and bctl metrics (skipped
    with a message without promtool);
  - hostile requests are bounded and breakerd keeps serving: a 64 KiB
    URL, 200 KiB of headers, a 10 MB body never sent, 60 connections at
    once (past the limits: the extra ones are refused), a silent
    half-sent request (closed after the idle timeout).
Uses its own segment /brkft-mhttp-PID and removes it. Stops by itself.
"""
import http.client
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import proc  # noqa: E402
from proc import check  # noqa: E402

BREAKERD, BCTL = sys.argv[1], sys.argv[2]
PROMTOOL = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else shutil.which("promtool")
SHM = proc.segment_name("mhttp")
TIMEOUT_S = 5  # METRICS_HTTP_TIMEOUT_S of daemon/metrics_http.h
daemon = None


def stop_daemon():
    if daemon and daemon.poll() is None:
        daemon.terminate()
        daemon.wait(10)


def bctl(*args, check_rc=True):
    r = proc.bctl(BCTL, SHM, *args)
    if check_rc and r.returncode != 0:
        print("bctl %s: exit %d: %s" % (args, r.returncode, r.stderr))
    return r


def bad_value(value, want, held=None):
    r = subprocess.run([BREAKERD, "--shm", SHM, "--metrics-listen", value],
                       capture_output=True, text=True, timeout=10)
    check(r.returncode == 2 and ("'%s'" % value) in r.stderr and want in r.stderr
          and not os.path.exists("/dev/shm" + SHM),
          "--metrics-listen %s: exit 2 naming it (%s), no segment created (got %d: %s)"
          % (value, want, r.returncode, r.stderr.strip().splitlines()[:1]))


def get(port, method="GET", path="/metrics", body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r, data


def mask(text):
    return re.sub(r"^((?:\S*remaining_seconds|\S*tokens|breakerd_daemon_heartbeat_age_seconds"
                  r"|breakerd_daemon_up|breakerd_oldest_in_flight_seconds)(?:\{[^}]*\})?) \S+$",
                  r"\1 X", text, flags=re.M)


def series(text, name):
    m = re.search(r"^" + re.escape(name) + r" (\S+)$", text, re.M)
    return m.group(1) if m else None


def promtool(text, desc):
    if not PROMTOOL or not os.access(PROMTOOL, os.X_OK):
        print("skip promtool check metrics on %s: promtool not installed "
              "(Debian: prometheus)" % desc)
        return
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=text,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "promtool check metrics passes on %s%s"
          % (desc, "" if r.returncode == 0 else ": " + r.stdout + r.stderr))


def raw(port, data, read=True, timeout=10):
    """Send @data on a new connection; the answer's first line, or '' if
    the server closed without one."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
    out = b""
    if read:
        try:
            while b"\r\n" not in out:
                chunk = s.recv(4096)
                if not chunk:
                    break
                out += chunk
        except (ConnectionResetError, socket.timeout):
            pass
    s.close()
    return out.split(b"\r\n", 1)[0].decode("latin-1")


def still_serves(port, desc):
    try:
        r, body = get(port)
        check(r.status == 200 and b"breakerd_segment_capacity" in body,
              "after %s, GET /metrics still answers 200" % desc)
    except OSError as e:
        check(False, "after %s, GET /metrics still answers (%s)" % (desc, e))


def main():
    global daemon
    proc.remove_segment(SHM)
    # ---- bad values: usage errors naming the value, nothing created ----
    bad_value("127.0.0.1", "has no port")
    bad_value("127.0.0.1:70000", "bad port")
    bad_value("127.0.0.1:", "bad port")
    bad_value("300.1.2.3:9464", "bad address")
    bad_value("localhost:9464", "bad address")
    bad_value("[::1]9464", "is not ADDR:PORT")
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    bad_value("127.0.0.1:%d" % busy.getsockname()[1], "Address already in use")
    busy.close()

    # ---- a breakerd serving /metrics on a kernel-chosen port ----
    daemon, port, lines = proc.start_breakerd(BREAKERD, SHM, "--interval", "50ms")
    if port is not None and not re.search(
            r'msg="metrics listening" listen=127\.0\.0\.1:%d port=%d( |$)' % (port, port),
            lines[-1]):
        port = None
    check(port is not None and port > 0, "the bound port is logged as a logfmt line")
    if port is None:
        return
    # drain the log so breakerd never blocks on a full pipe
    threading.Thread(target=lambda: [None for _ in daemon.stderr], daemon=True).start()

    r, body = get(port)
    check(r.status == 200 and r.getheader("Content-Type") ==
          "text/plain; version=0.0.4; charset=utf-8",
          "GET /metrics: 200, Content-Type text/plain; version=0.0.4; charset=utf-8")
    check(b'name="w/api"' not in body, "no series of w/api before any worker ran")

    # Worker processes change records: bctl exec runs each call through
    # libbreaker in its own process.
    bctl("config", "w/api", "--failure-threshold", "50")
    bctl("config", "w/bulk", "--max-concurrent", "2")
    workers = [subprocess.Popen([BCTL, "--shm", SHM, "exec", "w/api", "--", cmd])
               for cmd in ("true", "true", "true", "false", "false")]
    holder = subprocess.Popen([BCTL, "--shm", SHM, "exec", "w/bulk", "--",
                               "sleep", "3"])
    for w in workers:
        w.wait(30)
    held = None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        _, body = get(port)
        held = series(body.decode(), 'breakerd_in_flight{name="w/bulk"}')
        if held == "1":
            break
        time.sleep(0.05)
    text = body.decode()
    check(series(text, 'breakerd_allowed_total{name="w/api"}') == "5" and
          series(text, 'breakerd_successes_total{name="w/api"}') == "3" and
          series(text, 'breakerd_failures_total{name="w/api",reason="other"}') == "2",
          "a scrape after 5 worker calls sees allowed 5, successes 3, failures 2")
    check(held == "1", "a scrape while a worker holds a bulkhead permit sees in_flight 1")
    holder.wait(30)
    _, body = get(port)
    check(series(body.decode(), 'breakerd_in_flight{name="w/bulk"}') == "0",
          "a scrape after the worker released it sees in_flight 0")

    # The same renderer as bctl metrics.
    bm = bctl("metrics").stdout
    _, body = get(port)
    text = body.decode()
    check(mask(text) == mask(bm),
          "the /metrics body is what bctl metrics prints (clock-dependent gauges masked)")
    promtool(text, "the /metrics body")
    promtool(bm, "bctl metrics")

    # ---- HEAD, 404, 405 ----
    r, data = get(port, "HEAD")
    check(r.status == 200 and data == b"" and
          r.getheader("Content-Type").startswith("text/plain; version=0.0.4") and
          int(r.getheader("Content-Length", "0")) > 1000,
          "HEAD /metrics: 200, the GET headers, no body")
    for path in ("/", "/metric", "/metrics/", "/metrics/x", "/favicon.ico"):
        r, _ = get(port, path=path)
        check(r.status == 404, "GET %s: 404" % path)
    for method in ("POST", "PUT", "DELETE", "OPTIONS", "PATCH"):
        r, _ = get(port, method, body=b"x=1" if method in ("POST", "PUT") else None)
        check(r.status == 405 and r.getheader("Allow") == "GET, HEAD",
              "%s /metrics: 405 with Allow: GET, HEAD" % method)

    # ---- hostile requests ----
    first = raw(port, b"GET /" + b"a" * 65536 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    check(first == "" or " 414 " in first or " 431 " in first or " 400 " in first,
          "a 64 KiB URL is refused (%r)" % first)
    still_serves(port, "a 64 KiB URL")
    hdrs = b"".join(b"X-H%d: %s\r\n" % (i, b"v" * 1000) for i in range(200))
    first = raw(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + hdrs + b"\r\n")
    check(first == "" or " 431 " in first or " 413 " in first or " 400 " in first,
          "200 KiB of headers are refused (%r)" % first)
    still_serves(port, "200 KiB of headers")
    # A body announced and never sent: the answer comes without it.
    t0 = time.monotonic()
    first = raw(port, b"POST /metrics HTTP/1.1\r\nHost: x\r\n"
                b"Content-Length: 10000000\r\n\r\n" + b"z" * 1000)
    check(" 405 " in first and time.monotonic() - t0 < TIMEOUT_S,
          "a POST announcing a 10 MB body is answered 405 without it (%r)" % first)
    first = raw(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
                b"Content-Length: 10000000\r\n\r\n" + b"z" * 1000)
    check(" 200 " in first, "a GET announcing a 10 MB body is answered without it (%r)" % first)
    # More connections than the limits: the extra ones are closed at once.
    socks = []
    for _ in range(60):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        socks.append(s)
    time.sleep(0.5)
    closed = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except ConnectionResetError:
            closed += 1
    check(closed >= 60 - 16, "60 idle connections from one address: at most 16 kept "
          "(%d closed at once)" % closed)
    for s in socks:
        s.close()
    time.sleep(0.3)
    still_serves(port, "60 connections at once")
    # Slowloris: half a request, then silence: closed after the timeout.
    s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S + 10)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    t0 = time.monotonic()
    try:
        got = s.recv(4096)
    except (ConnectionResetError, socket.timeout):
        got = b"timeout"
    took = time.monotonic() - t0
    s.close()
    check(got != b"timeout" and b" 200 " not in got and took < TIMEOUT_S + 5,
          "a half-sent request is closed after the idle timeout (%.1f s, %r)"
          % (took, got[:40]))
    still_serves(port, "a half-sent request")

    daemon.terminate()
    rc = daemon.wait(10)
    check(rc == 0, "SIGTERM: breakerd with an HTTP thread exits 0 (got %s)" % rc)
    daemon = None


def main_and_verdict():
    main()
    print("%s" % ("FAILED: %d" % proc.fails if proc.fails else "all passed"))
    return 1 if proc.fails else 0


proc.run(main_and_verdict, SHM, cleanup=stop_daemon)
