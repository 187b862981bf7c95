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
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import proc  # noqa: E402
from proc import check  # noqa: E402

BREAKERD, MKRECORDS = sys.argv[1], sys.argv[2]
SHM = proc.segment_name("mstop")
N = 100000


def start():
    d, port, _ = proc.start_breakerd(BREAKERD, SHM, "--capacity", "131072")
    if port is None:
        raise RuntimeError("breakerd did not log its port")
    return d, port


def main():
    proc.remove_segment(SHM)
    r = subprocess.run([MKRECORDS, SHM, "131072", str(N)], capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        print("mkrecords: %s" % r.stderr)
        return 1
    d, port = start()
    s = proc.send_get(port, close=True)
    s.settimeout(120)
    t0 = time.time()
    s.recv(1)  # the answer starts once the render is done
    render_s = time.time() - t0
    s.close()
    check(render_s >= 0.5, "a render of %d breakers takes a while: %.2fs" % (N, render_s))

    s = proc.send_get(port, close=True)
    time.sleep(min(0.2, render_s / 5))
    t0 = time.time()
    proc.stop_breakerd(d, timeout=120)
    stop_s = time.time() - t0
    s.close()
    check(d.returncode == 0, "breakerd exits 0 on SIGTERM during a render (got %s)"
          % d.returncode)
    check(stop_s < render_s / 2,
          "it exits before the render could have finished: %.2fs (a render: %.2fs)"
          % (stop_s, render_s))
    return 1 if proc.fails else 0


if __name__ == "__main__":
    proc.run(main, SHM)
