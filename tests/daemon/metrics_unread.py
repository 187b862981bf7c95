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
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import proc  # noqa: E402
from proc import check  # noqa: E402

BREAKERD, BCTL = sys.argv[1], sys.argv[2]
with open(sys.argv[3]) as _h:  # daemon/metrics_http.h: the one definition
    MAX_RENDERS = int(re.search(r"#define METRICS_HTTP_MAX_RENDERS (\d+)", _h.read()).group(1))
SHM = proc.segment_name("munread")
N_BREAKERS = 1500
N_CONN = 30          # within METRICS_HTTP_MAX_CONN (32), 15 per address (16)


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
    proc.remove_segment(SHM)
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as f:
        for i in range(N_BREAKERS):
            f.write("[breaker unread/b%d]\nfailure_threshold = 3\n" % i)
        conf = f.name
    try:
        r = proc.bctl(BCTL, SHM, "segment", "create", "--capacity", "2048", timeout=60)
        if r.returncode != 0:
            print("bctl segment create: %s" % r.stderr)
            return 1
        r = proc.bctl(BCTL, SHM, "apply", conf, timeout=60)
        if r.returncode != 0:
            print("bctl apply: %s" % r.stderr)
            return 1
    finally:
        os.unlink(conf)

    d, port, _ = proc.start_breakerd(BREAKERD, SHM)
    if port is None:
        print("breakerd did not log its port")
        return 1
    socks = []
    for i in range(N_CONN):
        socks.append(proc.send_get(port, source="127.0.0.%d" % (2 + i // 15), rcvbuf=1024))
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
        status, body = proc.scrape(port)
        ok = status == 200 and b'name="unread/b0"' in body
        if status != 503:
            break
        time.sleep(0.5)
    check(ok, "once the hostile connections are closed, a scrape is 200 again")
    proc.stop_breakerd(d)
    check(d.returncode == 0, "breakerd exits 0 on SIGTERM (got %s)" % d.returncode)
    return 1 if proc.fails else 0


if __name__ == "__main__":
    proc.run(main, SHM)
