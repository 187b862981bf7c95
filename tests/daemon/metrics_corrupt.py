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
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import proc  # noqa: E402
from proc import check  # noqa: E402

BREAKERD, BCTL = sys.argv[1], sys.argv[2]
SHM = proc.segment_name("mcorrupt")


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
    proc.remove_segment(SHM)
    for name in ("good/a", "bad/b", "good/c"):
        r = proc.bctl(BCTL, SHM, "config", name)
        if r.returncode != 0:
            print("bctl config %s: %s" % (name, r.stderr))
            return 1
    check(corrupt_name("bad/b") >= 1, "the record bad/b's name overwritten in the segment")

    d, port, lines = proc.start_breakerd(BREAKERD, SHM)
    if port is None:
        print("breakerd did not log its port: %s" % "".join(lines))
        return 1
    bodies = []
    for _ in range(3):
        status, body = proc.scrape(port)
        bodies.append((status, body.decode()))
    lines += proc.stop_breakerd(d).splitlines(keepends=True)
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
    return 1 if proc.fails else 0


if __name__ == "__main__":
    proc.run(main, SHM)
