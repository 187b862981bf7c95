#!/usr/bin/env python3
"""metrics_unread.py BREAKERD BCTL METRICS_HTTP_H - scrapes that never read their answer.

A hostile client opens every connection breakerd --metrics-listen allows
(two source addresses: the per-address limit), sends GET /metrics on each
and reads nothing. Each answer is a full render of the segment (1500
breakers: about 5 MB here), held until it is sent or the connection times
out: unbounded, that is 32 renders in memory at once (and 32 renders in a
row in the one HTTP thread). Bounded: at most MAX_RENDERS answers are 200
(METRICS_HTTP_MAX_RENDERS of daemon/metrics_http.h), the others 503 with
Retry-After, and a scrape after the hostile connections are gone is 200.
Uses its own segment /brkft-munread-PID and removes it. Stops by itself.
"""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

BREAKERD, BCTL = sys.argv[1], sys.argv[2]
with open(sys.argv[3]) as _h:  # daemon/metrics_http.h: the one definition
    MAX_RENDERS = int(re.search(r"#define METRICS_HTTP_MAX_RENDERS (\d+)", _h.read()).group(1))
SHM = "/brkft-munread-%d" % os.getpid()
N_BREAKERS = 1500
N_CONN = 30          # within METRICS_HTTP_MAX_CONN (32), 15 per address (16)
fails = 0


def check(cond, desc):
    global fails
    print(("ok   " if cond else "FAIL ") + desc, flush=True)
    if not cond:
        fails += 1


def cleanup():
    for suffix in ("", "-d", "-l"):
        try:
            os.unlink("/dev/shm" + SHM + suffix)
        except FileNotFoundError:
            pass


def status_of(s):
    """The status code of the answer on @s (reads only its first bytes)."""
    s.settimeout(15)
    try:
        head = s.recv(32)
    except (socket.timeout, ConnectionResetError):
        return None
    m = re.match(rb"HTTP/1\.[01] (\d{3})", head)
    return int(m.group(1)) if m else None


def main():
    cleanup()
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as f:
        for i in range(N_BREAKERS):
            f.write("[breaker unread/b%d]\nfailure_threshold = 3\n" % i)
        conf = f.name
    try:
        r = subprocess.run([BCTL, "--shm", SHM, "segment", "create", "--capacity", "2048"],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            print("bctl segment create: %s" % r.stderr)
            return 1
        r = subprocess.run([BCTL, "--shm", SHM, "apply", conf], capture_output=True,
                           text=True, timeout=60)
        if r.returncode != 0:
            print("bctl apply: %s" % r.stderr)
            return 1
    finally:
        os.unlink(conf)

    d = subprocess.Popen([BREAKERD, "--shm", SHM, "--metrics-listen", "127.0.0.1:0"],
                         stderr=subprocess.PIPE, text=True)
    port = None
    for line in d.stderr:
        m = re.search(r'msg="metrics listening".* port=(\d+)', line)
        if m:
            port = int(m.group(1))
            break
    if port is None:
        d.kill()
        print("breakerd did not log its port")
        return 1
    socks = []
    for i in range(N_CONN):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        s.bind(("127.0.0.%d" % (2 + i // 15), 0))
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        socks.append(s)
        time.sleep(0.01)
    codes = [status_of(s) for s in socks]
    n200 = codes.count(200)
    n503 = codes.count(503)
    check(1 <= n200 <= MAX_RENDERS,
          "at most %d of %d unread scrapes get a render (200): %d"
          % (MAX_RENDERS, N_CONN, n200))
    check(n200 + n503 == N_CONN,
          "the others are answered 503 at once (got %r)" % codes)
    for s in socks:
        s.close()
    time.sleep(0.5)
    ok = False
    for _ in range(20):  # the closed connections are noticed within a poll or two
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                                        timeout=10) as r:
                ok = r.status == 200 and b'name="unread/b0"' in r.read()
                break
        except urllib.error.HTTPError as e:
            if e.code != 503:
                break
            time.sleep(0.5)
    check(ok, "once the hostile connections are closed, a scrape is 200 again")
    d.send_signal(signal.SIGTERM)
    d.communicate(timeout=20)
    check(d.returncode == 0, "breakerd exits 0 on SIGTERM (got %s)" % d.returncode)
    return 1 if fails else 0


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        cleanup()
    sys.exit(rc)
