"""proc.py - the helpers shared by the stdlib-only Python process tests.

The Python counterpart of proc.h for the scripts in tests/daemon and
tests/cli that run breakerd and bctl as real processes: ok/FAIL verdicts
with a failure count, a segment of their own (named after the test and
its pid) removed with its companions, bctl runs, breakerd started with
--metrics-listen 127.0.0.1:0 and the kernel-chosen port read from its
log, a raw GET /metrics and a scrape. Stdlib only: meson may run the
scripts with a python3 that has none of Debian's packages.

A script imports it by adding this folder to sys.path from its own path:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "common"))
    import proc
"""
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

fails = 0

# breakerd's logfmt line once its HTTP thread listens (daemon/metrics_http.c)
LISTENING = re.compile(r'msg="metrics listening".* port=(\d+)')


def check(cond, desc):
    """Print "ok   DESC" or "FAIL DESC"; a FAIL counts in proc.fails."""
    global fails
    print(("ok   " if cond else "FAIL ") + desc, flush=True)
    if not cond:
        fails += 1
    return cond


def segment_name(tag):
    """The test's own segment: /brkft-TAG-PID."""
    return "/brkft-%s-%d" % (tag, os.getpid())


def remove_segment(shm):
    """Unlink segment @shm and its companions (-d, -l) in /dev/shm, if there."""
    for suffix in ("", "-d", "-l"):
        try:
            os.unlink("/dev/shm" + shm + suffix)
        except FileNotFoundError:
            pass


def run(main, shm, cleanup=None):
    """Exit with main()'s code; @cleanup (if any) and the removal of @shm
    run whatever main() does."""
    try:
        rc = main()
    finally:
        if cleanup:
            cleanup()
        remove_segment(shm)
    sys.exit(rc)


def bctl(path, shm, *args, timeout=30):
    """Run bctl --shm @shm ARGS; the CompletedProcess (text output)."""
    return subprocess.run([path, "--shm", shm] + list(args), capture_output=True,
                          text=True, timeout=timeout)


def start_breakerd(path, shm, *args, timeout=20):
    """Start breakerd --shm @shm ARGS --metrics-listen 127.0.0.1:0 with its
    log on a pipe and read it up to the "metrics listening" line.
    Returns (process, port, log lines read); port is None (and the process
    killed) when no such line came within @timeout seconds."""
    d = subprocess.Popen([path, "--shm", shm] + list(args)
                         + ["--metrics-listen", "127.0.0.1:0"],
                         stderr=subprocess.PIPE, text=True)
    lines = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = d.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = LISTENING.search(line)
        if m:
            return d, int(m.group(1)), lines
    d.kill()
    d.wait()
    return d, None, lines


def stop_breakerd(d, timeout=20):
    """SIGTERM breakerd @d and wait (killed after @timeout seconds).
    Returns the rest of its log."""
    d.send_signal(signal.SIGTERM)
    try:
        _, rest = d.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        d.kill()
        _, rest = d.communicate()
    return rest or ""


def send_get(port, close=False, source=None, rcvbuf=None):
    """Send GET /metrics on a new connection to 127.0.0.1:@port (from
    address @source, with receive buffer @rcvbuf if given) and return the
    socket, the answer unread."""
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    if source:
        s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
              + (b"Connection: close\r\n" if close else b"") + b"\r\n")
    return s


def scrape(port, timeout=10):
    """GET http://127.0.0.1:@port/metrics: (status, body bytes), an error
    status included."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                                    timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
