"""A real Celery worker (prefork pool, 4 processes, kombu filesystem broker)
whose tasks call a 429-ing upstream through BreakerAdapter +
retry_on_refusal.

The upstream answers the first request with 429 and Retry-After: 2 and
keeps answering 429 (with the remaining seconds) for 2 s; then 200. The
one Retry-After cools every pool process through the shared breaker: only
the calls already in flight when it arrived (at most one per process)
reach the upstream during those 2 s; every other attempt is refused
before sending and becomes task.retry(countdown=wait). Every task id
completes exactly once, none is lost.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyint_fixtures  # noqa: E402,F401  (SIGTERM -> cleanup)


import json
import os
import subprocess
import threading
import time

import breakerd

import fleetlib as F
import upstream as U

PROCS = 4
TASKS = 24
RETRY_AFTER = 2


class Window:
    """429 + Retry-After for RETRY_AFTER s from the first request, then 200."""

    def __init__(self):
        self.lock = threading.Lock()
        self.t0 = None
        self.wall0 = None

    def __call__(self, rec):
        with self.lock:
            if self.t0 is None:
                self.t0, self.wall0 = rec["t"], rec["wall"]
            left = self.t0 + RETRY_AFTER - rec["t"]
        if left > 0:
            return 429, {"Retry-After": str(max(1, int(left + 0.999)))}
        time.sleep(0.02)
        return 200, {}


def test_celery_prefork_fleet_one_retry_after_cools_every_process(tmp_path, capsys):
    d = tmp_path
    for sub in ("broker", "processed", "done", "dup"):
        (d / sub).mkdir()
    shm = F.segment_name("cel")
    F.unlink_segment(shm)
    up = U.Upstream()
    window = Window()
    up.set(window)
    env = F.child_env(FLEET_DIR=str(d), FLEET_UPSTREAM=up.url, BREAKERD_SHM=shm)
    worker = None
    old_dir = os.environ.get("FLEET_DIR")
    log = open(d / "worker.log", "wb")
    try:
        seg = breakerd.attach(shm)
        # the test sends tasks with the same app (same broker directory)
        os.environ["FLEET_DIR"] = str(d)
        import importlib
        import celery_app
        importlib.reload(celery_app)
        ids = [celery_app.call.apply_async().id for _ in range(TASKS)]
        worker = F.spawn([F.PYTHON, "-m", "celery", "-A", "celery_app", "worker",
                          "--pool", "prefork", "--concurrency", str(PROCS),
                          "--loglevel", "WARNING", "--without-gossip", "--without-mingle",
                          "--without-heartbeat", "-n", "fleet%d@localhost" % os.getpid()],
                         cwd=F.HERE, env=env, stdout=log, stderr=subprocess.STDOUT)
        F.wait_until(lambda: len(os.listdir(d / "done")) >= TASKS or worker.poll() is not None,
                     90, 0.1, "every task to complete")
        assert worker.poll() is None, (d / "worker.log").read_text()
        time.sleep(0.5)  # a duplicate completion would show up now
        pool = F.children(worker.pid)

        done = sorted(os.listdir(d / "done"))
        dups = os.listdir(d / "dup")
        reqs = up.snapshot()
        attempts = [ln.split() for ln in (d / "attempts.log").read_text().splitlines()]
        in_window = [r for r in reqs if r["t"] < window.t0 + RETRY_AFTER]
        ok_by_task = {}
        for r in reqs:
            if r["status"] == 200:
                ok_by_task[r["task"]] = ok_by_task.get(r["task"], 0) + 1
        refusals = [a for a in attempts if a[4].startswith("refused:")]
        refused_pids = {a[3] for a in refusals}
        retried = {a[1] for a in attempts if int(a[2]) > 0}
        # attempts by retried tasks that reached the upstream came after the window
        early = [a for a in attempts if int(a[2]) > 0 and a[4].startswith("status:")
                 and float(a[0]) < window.wall0 + RETRY_AFTER - 0.05]
        countdowns = sorted(float(a[4].split(":")[2]) for a in refusals)
        fig = {"tasks": TASKS, "done": len(done), "duplicates": len(dups),
               "upstream_requests": len(reqs), "requests_in_429_window": len(in_window),
               "refusals": len(refusals), "refused_pids": len(refused_pids),
               "attempts": len(attempts),
               "pool_processes": len(pool), "tasks_retried": len(retried),
               "countdown_min_s": countdowns[0] if countdowns else None,
               "countdown_max_s": countdowns[-1] if countdowns else None}
        with capsys.disabled():
            print("\n[celery fleet] %s" % json.dumps(fig))

        assert done == sorted(ids), fig                       # none lost, none foreign
        assert dups == [], fig                                # none completed twice
        assert all(ok_by_task.get(i) == 1 for i in ids), fig  # one 200 per task id
        assert len(ok_by_task) == TASKS, fig
        # one Retry-After cooled every process: only calls already in flight
        # when the first 429 was reported reach the upstream in the window
        assert 1 <= len(in_window) <= PROCS, fig
        # every attempt made in the window, by any process, was refused
        # before sending or was one of those in-flight 429s
        in_win = [a for a in attempts
                  if window.wall0 <= float(a[0]) < window.wall0 + RETRY_AFTER - 0.05]
        assert all(a[4].startswith("refused:") or a[4] == "status:429" for a in in_win), fig
        assert len(refused_pids) >= 2, fig
        assert len(refusals) >= TASKS // 2, fig
        assert len(retried) >= TASKS // 2, fig
        # countdowns: the remaining cooling period (+ jitter <= 1/4 of it)
        assert all(0 < c <= RETRY_AFTER * 1.25 + 0.1 for c in countdowns), fig
        assert early == [], fig
    finally:
        if old_dir is None:
            os.environ.pop("FLEET_DIR", None)
        else:
            os.environ["FLEET_DIR"] = old_dir
        F.stop(worker, grace=10)
        log.close()
        up.close()
        F.unlink_segment(shm)
