"""upstream.py - the fixed-capacity upstream of the adaptive-concurrency
benchmark and integration test (issue 25): a WSGI app for Debian's gunicorn
(python3-gunicorn) run with sync workers, which serve one request at a time
each. Every request but /up sleeps UPSTREAM_SLEEP_MS (default 20) and
answers 200 "ok": with 4 workers the capacity is 4 / 20 ms = 200 r/s, and
the sleep costs no CPU. /up answers at once (the starter's readiness probe).

Capacity is halved mid-run without a restart by halving the WORKERS, not
by slowing the handler: gunicorn's master takes SIGTTOU as "one worker
fewer" (it stops the oldest gracefully: it finishes its request) and
SIGTTIN as "one more" (tests/common/gunicorn_harness.sh gunicorn_workers,
bench/adaptive_bench.c). 4 -> 2 workers is 200 -> 100 r/s while the
unloaded latency stays 20 ms: what is lost is capacity, and latency grows
only through the queue in gunicorn's listen backlog - the slow-but-alive
upstream of the issue, and the bound "p99 <= 2x unloaded" keeps one meaning
before and after the cut.

Run: /usr/bin/python3 -m gunicorn --workers 4 --chdir bench/adaptive \
         --bind 127.0.0.1:PORT upstream:app
"""
import os
import time

SLEEP_S = float(os.environ.get("UPSTREAM_SLEEP_MS", "20")) / 1000.0


def app(environ, start_response):
    if environ.get("PATH_INFO") != "/up":
        time.sleep(SLEEP_S)
    body = b"ok\n"
    start_response("200 OK", [("Content-Type", "text/plain"),
                              ("Content-Length", str(len(body)))])
    return [body]
