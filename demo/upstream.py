#!/usr/bin/env python3
"""upstream.py - the breakerd demo's HTTP upstream, on loopback only.

It plays a dependency that goes down and comes back:

    POST /start        starts a run: counters reset, schedule starts now
    GET  /anything     while up: 200; while down: 503 (no Retry-After, so
                       a breaker has to learn from the failures themselves)
    GET  /stats        JSON counters and the schedule (not counted)

The schedule, after each POST /start: up for --up-ms, down for --down-ms,
then up again until the next POST /start. Instants are reported as
CLOCK_MONOTONIC nanoseconds (time.monotonic_ns() on Linux), the clock the
C side and libbreaker use, so the demo can place events on one time line.

Binds 127.0.0.1 on a free port and prints the port alone on stdout line 1.
Exits on SIGTERM, when its parent goes away, or after --lifetime-s seconds
whatever happens (a self-destruct, so a crashed demo leaves nothing behind).
"""

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PHASES = ("idle", "up", "down", "recovered")


class Schedule:
    """Counts requests by phase of the current run. Thread-safe."""

    def __init__(self, up_ms, down_ms):
        self.up_ns = up_ms * 1_000_000
        self.down_ns = down_ms * 1_000_000
        self.lock = threading.Lock()
        self.start_ns = None
        self.runs = 0
        self.counts = dict.fromkeys(PHASES, 0)

    def start(self):
        with self.lock:
            self.start_ns = time.monotonic_ns()
            self.runs += 1
            self.counts = dict.fromkeys(PHASES, 0)
            return self._describe()

    def phase(self, now_ns):
        if self.start_ns is None:
            return "idle"
        t = now_ns - self.start_ns
        if t < self.up_ns:
            return "up"
        if t < self.up_ns + self.down_ns:
            return "down"
        return "recovered"

    def hit(self):
        """Count one request; return its phase (decided on arrival)."""
        with self.lock:
            phase = self.phase(time.monotonic_ns())
            self.counts[phase] += 1
            return phase

    def stats(self):
        with self.lock:
            out = self._describe()
            out["counts"] = dict(self.counts)
            out["now_ns"] = time.monotonic_ns()
            return out

    def _describe(self):
        s = self.start_ns or 0
        return {
            "run": self.runs,
            "start_ns": s,
            "down_at_ns": s + self.up_ns if s else 0,
            "recovered_at_ns": s + self.up_ns + self.down_ns if s else 0,
            "up_ms": self.up_ns // 1_000_000,
            "down_ms": self.down_ns // 1_000_000,
        }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: one connection per worker
    # Headers and body go out in two writes; without TCP_NODELAY the second
    # waits for the client's delayed ACK (~40 ms per request on loopback).
    disable_nagle_algorithm = True
    server_version = "demo-upstream/1"
    schedule = None  # set in main()

    def log_message(self, fmt, *args):  # quiet: hundreds of requests/s
        pass

    def reply(self, code, body, ctype="text/plain"):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def reply_json(self, obj):
        self.reply(200, json.dumps(obj) + "\n", "application/json")

    def do_GET(self):
        if self.path == "/stats":
            self.reply_json(self.schedule.stats())
            return
        if self.schedule.hit() == "down":
            self.reply(503, "service unavailable\n")
        else:
            self.reply(200, "ok\n")

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if self.path == "/start":
            self.reply_json(self.schedule.start())
        else:
            self.reply(404, "no such endpoint\n")


def watch_parent(parent, lifetime_s):
    """Exit when the parent dies or the lifetime is over."""
    deadline = time.monotonic() + lifetime_s
    while time.monotonic() < deadline and os.getppid() == parent:
        time.sleep(0.2)
    os._exit(0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--up-ms", type=int, required=True)
    ap.add_argument("--down-ms", type=int, required=True)
    ap.add_argument("--lifetime-s", type=float, default=120.0)
    args = ap.parse_args()
    if args.up_ms < 0 or args.down_ms < 0 or args.lifetime_s <= 0:
        ap.error("durations must be positive")

    Handler.schedule = Schedule(args.up_ms, args.down_ms)
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.request_queue_size = 128
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=watch_parent,
                     args=(os.getppid(), args.lifetime_s),
                     daemon=True).start()
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
