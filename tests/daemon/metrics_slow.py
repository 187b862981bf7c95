#!/usr/bin/env python3
"""metrics_slow.py BREAKERD BCTL - slow clients cannot lock a scraper out of /metrics.

16 clients on 127.0.0.1 (breakerd's per-address limit) each send the
start of a request and then one byte every 0.5 s, never finishing it,
and reconnect at once whenever breakerd drops them (issue 26). While they
trickle, three normal scrapes from the same address must each succeed
within 2 s; a trickling connection is dropped within
METRICS_HTTP_REQUEST_S (5 s) + 2 s of its start; and breakerd's log stays
short (the drops are counted on a few rate-limited lines, not one line
each). Uses its own segment /brkft-mslow-PID and removes it.
"""
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import proc  # noqa: E402
from proc import check  # noqa: E402

BREAKERD, BCTL = sys.argv[1], sys.argv[2]
SHM = proc.segment_name("mslow")
N_SLOW = 16
stop = threading.Event()
lifetimes = []          # seconds a trickling connection lasted
lock = threading.Lock()


def trickler(port):
    while not stop.is_set():
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: ")
        except OSError:
            time.sleep(0.05)
            continue
        t0 = time.monotonic()
        try:
            while not stop.is_set():
                s.sendall(b"a")
                s.settimeout(0.5)
                try:
                    if s.recv(1) == b"":
                        break  # closed by breakerd
                except socket.timeout:
                    pass
        except OSError:
            pass
        with lock:
            if not stop.is_set():
                lifetimes.append(time.monotonic() - t0)
        s.close()


def scrape_within(port, limit_s):
    """Seconds until a scrape of /metrics answered 200 (retrying), or None."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        try:
            status, body = proc.scrape(port, timeout=max(0.1, limit_s - (time.monotonic() - t0)))
            if status == 200 and b'name="slow/b0"' in body:
                return time.monotonic() - t0
        except OSError:
            pass
        time.sleep(0.05)
    return None


def main():
    proc.remove_segment(SHM)
    r = proc.bctl(BCTL, SHM, "segment", "create", "--capacity", "64")
    if r.returncode != 0:
        print("bctl segment create: %s" % r.stderr)
        return 1
    proc.bctl(BCTL, SHM, "config", "slow/b0")
    d, port, _ = proc.start_breakerd(BREAKERD, SHM)
    if port is None:
        print("breakerd did not log its port")
        return 1
    threads = [threading.Thread(target=trickler, args=(port,), daemon=True)
               for _ in range(N_SLOW)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    for i in range(3):
        took = scrape_within(port, 2.0)
        check(took is not None,
              "scrape %d from the trickling clients' address succeeds within 2 s (%s)"
              % (i + 1, "%.2f s" % took if took is not None else "failed"))
        time.sleep(2.0)
    time.sleep(3.0)
    stop.set()
    for t in threads:
        t.join(timeout=5)
    with lock:
        longest = max(lifetimes) if lifetimes else None
    check(longest is not None and longest < 7.0,
          "every trickling connection is dropped within 5 s + 2 s (longest %s, %d drops)"
          % ("%.1f s" % longest if longest is not None else "none", len(lifetimes)))
    rest = proc.stop_breakerd(d)
    lines = [ln for ln in rest.splitlines() if "metrics" in ln and "level=warn" in ln]
    check(len(lines) <= 12,
          "the drops take a few rate-limited log lines (%d warn lines)" % len(lines))
    check(any("dropped=" in ln for ln in lines),
          "a line counts the slow clients dropped")
    return 1 if proc.fails else 0


if __name__ == "__main__":
    proc.run(main, SHM)
