#!/usr/bin/env python3
"""metrics_corrupt.py BREAKERD BCTL - a corrupt record while Prometheus scrapes.

breakerd --metrics-listen on a segment where one record's name was
overwritten (a byte outside [A-Za-z0-9._:/-], as a stray write would
leave it): every scrape answers 200 with the other records and without
the corrupt one, and breakerd's log stays logfmt - no bare
"breakerd: ...: segment content is corrupt" line per scrape, but one
level=warn line with the number of records left out, logged when that
number changes (not once per scrape: Prometheus scrapes every few
seconds). Uses its own segment /brkft-mcorrupt-PID and removes it.
"""
import mmap
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

BREAKERD, BCTL = sys.argv[1], sys.argv[2]
SHM = "/brkft-mcorrupt-%d" % os.getpid()
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


def corrupt_name(name, byte=b"$"):
    """Overwrite the second byte of every copy of @name in the segment."""
    with open("/dev/shm" + SHM, "r+b") as f:
        m = mmap.mmap(f.fileno(), 0)
        pat = name.encode() + b"\0"
        i, n = m.find(pat), 0
        while i >= 0:
            m[i + 1:i + 2] = byte
            n += 1
            i = m.find(pat, i + 1)
        m.flush()
        m.close()
    return n


def main():
    cleanup()
    for name in ("good/a", "bad/b", "good/c"):
        r = subprocess.run([BCTL, "--shm", SHM, "config", name], capture_output=True,
                           text=True, timeout=30)
        if r.returncode != 0:
            print("bctl config %s: %s" % (name, r.stderr))
            return 1
    check(corrupt_name("bad/b") >= 1, "the record bad/b's name overwritten in the segment")

    d = subprocess.Popen([BREAKERD, "--shm", SHM, "--metrics-listen", "127.0.0.1:0"],
                         stderr=subprocess.PIPE, text=True)
    lines = []
    port = None
    deadline = time.time() + 20
    while port is None and time.time() < deadline:
        line = d.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r'msg="metrics listening".* port=(\d+)', line)
        if m:
            port = int(m.group(1))
    if port is None:
        d.kill()
        print("breakerd did not log its port: %s" % "".join(lines))
        return 1
    bodies = []
    for _ in range(3):
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
            bodies.append((r.status, r.read().decode()))
    d.send_signal(signal.SIGTERM)
    _, rest = d.communicate(timeout=20)
    lines += rest.splitlines(keepends=True)
    check(d.returncode == 0, "breakerd exits 0 on SIGTERM (got %s)" % d.returncode)

    for status, body in bodies:
        check(status == 200 and 'name="good/a"' in body and 'name="good/c"' in body
              and "bad" not in body.replace("breakerd_", ""),
              "a scrape answers 200 with the good records, without the corrupt one")
    nonlogfmt = [l for l in lines if not l.startswith("ts=")]
    check(not nonlogfmt, "every line breakerd logs is logfmt (got %r)" % nonlogfmt[:3])
    warns = [l for l in lines if "level=warn" in l and "corrupt" in l]
    check(len(warns) == 1 and "left_out=1" in warns[0],
          "one level=warn line says 1 corrupt record was left out, not one a "
          "scrape (got %r)" % warns)
    return 1 if fails else 0


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        cleanup()
    sys.exit(rc)
