#!/usr/bin/env python3
"""metrics_stop.py BREAKERD MKRECORDS - SIGTERM during a scrape of a big segment.

A segment of 100000 breakers (tests/cli/mkrecords): one render for
/metrics takes seconds (T, measured here with a full scrape first). A
second scrape is sent, and breakerd gets SIGTERM while it is rendered:
breakerd must exit 0 well before that render could have finished (under
T/2), not hold SIGTERM up for a whole render (systemd's stop, a
container's grace period). Uses its own segment /brkft-mstop-PID and
removes it. Stops by itself.
"""
import os
import re
import signal
import socket
import subprocess
import sys
import time

BREAKERD, MKRECORDS = sys.argv[1], sys.argv[2]
SHM = "/brkft-mstop-%d" % os.getpid()
N = 100000
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


def start():
    d = subprocess.Popen([BREAKERD, "--shm", SHM, "--capacity", "131072",
                          "--metrics-listen", "127.0.0.1:0"],
                         stderr=subprocess.PIPE, text=True)
    for line in d.stderr:
        m = re.search(r'msg="metrics listening".* port=(\d+)', line)
        if m:
            return d, int(m.group(1))
    d.kill()
    raise RuntimeError("breakerd did not log its port")


def send_get(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    return s


def main():
    cleanup()
    r = subprocess.run([MKRECORDS, SHM, "131072", str(N)], capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        print("mkrecords: %s" % r.stderr)
        return 1
    d, port = start()
    s = send_get(port)
    s.settimeout(120)
    t0 = time.time()
    s.recv(1)  # the answer starts once the render is done
    render_s = time.time() - t0
    s.close()
    check(render_s >= 0.5, "a render of %d breakers takes a while: %.2fs" % (N, render_s))

    s = send_get(port)
    time.sleep(min(0.2, render_s / 5))
    t0 = time.time()
    d.send_signal(signal.SIGTERM)
    try:
        d.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        d.kill()
        d.communicate()
    stop_s = time.time() - t0
    s.close()
    check(d.returncode == 0, "breakerd exits 0 on SIGTERM during a render (got %s)"
          % d.returncode)
    check(stop_s < render_s / 2,
          "it exits before the render could have finished: %.2fs (a render: %.2fs)"
          % (stop_s, render_s))
    return 1 if fails else 0


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        cleanup()
    sys.exit(rc)
