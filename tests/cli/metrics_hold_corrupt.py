#!/usr/bin/env python3
"""metrics_hold_corrupt.py BCTL - a corrupt hold-time bucket in the segment.

The segment is untrusted: a hold-time histogram whose first bucket
counter was overwritten with 2^64-1 (a stray write) must still be printed
(with a hold in the next bucket, so a sum would wrap to 0)
as a valid Prometheus histogram - cumulative buckets that never decrease
(saturating at 2^64-1 instead of wrapping to 0) and _count equal to the
+Inf bucket - and `bctl inspect` must not say "0 holds". Uses its own
segment /brkft-holdc-PID and removes it.
"""
import json
import mmap
import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import proc  # noqa: E402
from proc import check  # noqa: E402

BCTL = sys.argv[1]
SHM = proc.segment_name("holdc")
U64_MAX = 2**64 - 1


def bctl(*args):
    r = proc.bctl(BCTL, SHM, *args)
    if r.returncode != 0:
        raise RuntimeError("bctl %s: exit %d: %s" % (args, r.returncode, r.stderr))
    return r.stdout


def main():
    bctl("config", "svc/h", "--max-concurrent", "2", "--hold-histogram", "on")
    bctl("exec", "svc/h", "--", "true")
    hold = json.loads(bctl("inspect", "--json", "svc/h"))["hold_time"]
    # --json counts cumulatively (like Prometheus' le); the block in shm
    # holds each bucket's own count
    cum = [b["count"] for b in hold["buckets"]]
    words = [c - p for c, p in zip(cum, [0] + cum[:-1])] + [hold["sum_us"]]
    pat = b"".join(struct.pack("<Q", w) for w in words)
    with open("/dev/shm" + SHM, "r+b") as f:
        m = mmap.mmap(f.fileno(), 0)
        at = m.find(pat)
        check(at >= 0 and m.find(pat, at + 1) < 0, "the hold block found in the segment")
        if at < 0:
            return 1
        # bucket le=0.005 = 2^64-1, le=0.01 = 1: their sum wraps to 0
        m[at:at + 16] = struct.pack("<QQ", U64_MAX, 1)
        m.flush()
        m.close()

    text = bctl("metrics")
    cum = [int(v) for v in re.findall(
        r'^breakerd_permit_hold_seconds_bucket\{name="svc/h",le="[^"]+"\} (\d+)$',
        text, re.M)]
    count = re.search(r'^breakerd_permit_hold_seconds_count\{name="svc/h"\} (\d+)$',
                      text, re.M)
    check(len(cum) == len(words) - 1, "every bucket printed (%d)" % len(cum))
    check(all(a <= b for a, b in zip(cum, cum[1:])),
          "cumulative buckets never decrease (got %r)" % cum)
    check(count and cum and int(count.group(1)) == cum[-1] == U64_MAX,
          "_count is the +Inf bucket, saturated at 2^64-1 (got %s, %r)"
          % (count and count.group(1), cum[-1:]))
    text = bctl("inspect", "svc/h")
    check("%d holds" % U64_MAX in text,
          "bctl inspect counts the holds saturated, not wrapped to 0 (%s)"
          % [l for l in text.splitlines() if "hold_time" in l])
    return 1 if proc.fails else 0


if __name__ == "__main__":
    proc.run(main, SHM)
