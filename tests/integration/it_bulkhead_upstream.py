#!/usr/bin/env python3
"""it_bulkhead_upstream.py BCTL BREAKERD - a bulkhead of 3 in front of a real, slow
HTTP upstream, driven through `bctl exec`.

Upstream: upstream.py on 127.0.0.1 (port 0), 200 ms per request, counting
the requests it serves at once (GET /max).

1. Eight callers loop for ~2.5 s, each running
     bctl exec bh -- python3 -c 'urllib.request.urlopen(URL/work)'
   The upstream never sees more than 3 at once; some calls are refused
   (exit 75, "bulkhead full"), and the breaker's rejected_full counter
   matches the exits 75.
2. Three holders (`bctl exec bh -- sleep`) fill the bulkhead: a further
   `bctl exec` is refused at once (exit 75 in < 100 ms, CMD not run).
3. With breakerd running at --interval 50ms, `kill -9` of a holder gives
   its permit back within 250 ms (polled with `bctl inspect bh --json`,
   in_flight), once for each of the three holders.

Uses its own segment /brkbud-bulkhead-<pid>, removed at the end.
Exit 0 pass, 1 fail, 77 skip.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
LIMIT = 3
CALLERS = 8
RUN_S = 2.5
REFUSE_MS = 100
RECLAIM_MS = 250

failures = 0


def check(ok, what):
    global failures
    print(("ok   - " if ok else "FAIL - ") + what, flush=True)
    if not ok:
        failures += 1


def note(what):
    print("# " + what, flush=True)


class Test:
    def __init__(self, bctl, breakerd):
        self.bctl = bctl
        self.breakerd = breakerd
        self.shm = "/brkbud-bulkhead-%d" % os.getpid()
        self.tmp = tempfile.mkdtemp(prefix="brkbud-bulkhead.")
        self.procs = []      # everything we started, killed at the end
        self.pidfiles = []   # pids of the holders' commands (orphans)
        self.upstream = None
        self.url = None

    # -- helpers ----------------------------------------------------------
    def run_bctl(self, *args, timeout=30):
        return subprocess.run([self.bctl, "--shm", self.shm] + list(args),
                              stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=timeout)

    def inspect(self):
        r = self.run_bctl("inspect", "bh", "--json")
        if r.returncode != 0:
            raise RuntimeError("bctl inspect: " + r.stderr.strip())
        return json.loads(r.stdout)

    def http_get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=10) as resp:
            return resp.read().decode().strip()

    def wait_in_flight(self, want, timeout_s):
        """Poll until in_flight == want; the seconds it took, or None."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout_s:
            if self.inspect()["in_flight"] == want:
                return time.monotonic() - t0
            time.sleep(0.002)
        return None

    def start_upstream(self):
        self.upstream = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "upstream.py"), "0.2"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.procs.append(self.upstream)
        port = int(self.upstream.stdout.readline())
        self.url = "http://127.0.0.1:%d" % port
        note("upstream on %s" % self.url)

    # -- 1. eight callers ---------------------------------------------------
    def callers(self):
        client = ("import sys, urllib.request; "
                  "urllib.request.urlopen(sys.argv[1], timeout=10).read()")
        codes = []
        errors = []
        lock = threading.Lock()
        end = time.monotonic() + RUN_S

        def caller():
            while time.monotonic() < end:
                r = self.run_bctl("exec", "bh", "--", sys.executable, "-c",
                                  client, self.url + "/work", timeout=60)
                with lock:
                    codes.append(r.returncode)
                    if r.returncode == 75 and "bulkhead full" not in r.stderr:
                        errors.append(r.stderr.strip())
                    elif r.returncode not in (0, 75):
                        errors.append("exit %d: %s" % (r.returncode,
                                                       r.stderr.strip()))
                if r.returncode == 75:
                    time.sleep(0.01)  # refused: do not spin

        threads = [threading.Thread(target=caller) for _ in range(CALLERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        served, refused = codes.count(0), codes.count(75)
        peak = int(self.http_get("/max"))
        info = self.inspect()
        note("%d callers, %.1f s: %d calls, %d served, %d refused (bulkhead "
             "full); the upstream saw at most %d at once; %s" %
             (CALLERS, RUN_S, len(codes), served, refused, peak,
              self.http_get("/stats")))
        check(1 <= peak <= LIMIT,
              "the upstream never saw more than %d requests at once (max %d)"
              % (LIMIT, peak))
        check(served > 0 and refused > 0,
              "calls were served (%d) and refused when the bulkhead was "
              "full (%d)" % (served, refused))
        check(not errors, "every call exited 0, or 75 with 'bulkhead full'"
              + ("" if not errors else ": " + "; ".join(errors[:3])))
        rf = info["counters"]["rejected_full"]
        check(rf == refused, "the breaker counted %d rejected_full for %d "
              "exits 75" % (rf, refused))
        check(info["in_flight"] == 0, "no permit left out afterwards "
              "(in_flight %d)" % info["in_flight"])

    # -- 2. refused at once when full ------------------------------------
    def start_holders(self):
        holders = []
        for i in range(LIMIT):
            pf = os.path.join(self.tmp, "holder%d.pid" % i)
            self.pidfiles.append(pf)
            p = subprocess.Popen(
                [self.bctl, "--shm", self.shm, "exec", "bh", "--", "sh", "-c",
                 'echo $$ > "$1"; exec sleep 60', "sh", pf],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
            self.procs.append(p)
            holders.append(p)
        return holders

    def refused_fast(self):
        marker = os.path.join(self.tmp, "ran")
        times = []
        codes = []
        lines = []
        for _ in range(10):
            t0 = time.monotonic()
            r = self.run_bctl("exec", "bh", "--", "sh", "-c",
                              'echo ran >> "$1"', "sh", marker)
            times.append((time.monotonic() - t0) * 1000.0)
            codes.append(r.returncode)
            lines.append(r.stderr.strip())
        times_sorted = sorted(times)
        note("refusals with the bulkhead full: %s ms (median %.1f, max %.1f)"
             % (", ".join("%.1f" % t for t in times), times_sorted[5],
                times_sorted[-1]))
        check(all(c == 75 for c in codes), "a caller finding the bulkhead "
              "full exits 75 (%s)" % sorted(set(codes)))
        check(all(l == "bctl: bh: bulkhead full" for l in lines),
              "with one line 'bctl: bh: bulkhead full' (%r)" % lines[0])
        check(not os.path.exists(marker), "and its command is not run")
        fast = sum(1 for t in times if t < REFUSE_MS)
        check(fast >= 9 and times_sorted[-1] < 1000,
              "without blocking: %d of 10 answered in < %d ms, slowest "
              "%.1f ms" % (fast, REFUSE_MS, times_sorted[-1]))

    # -- 3. kill -9 of a holder ------------------------------------------
    def start_daemon(self):
        d = subprocess.Popen([self.breakerd, "--shm", self.shm,
                              "--interval", "50ms"],
                             stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL,
                             stderr=open(os.path.join(self.tmp, "breakerd.log"),
                                         "w"))
        self.procs.append(d)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 5:
            seg = self.inspect().get("segment", {})
            if seg.get("daemon_running") and seg.get("daemon_pid") == d.pid:
                return d
            time.sleep(0.01)
        raise RuntimeError("breakerd did not publish a heartbeat in 5 s")

    def reclaim(self, holders):
        lat = []
        for n, h in enumerate(holders):
            want = LIMIT - n - 1
            t0 = time.monotonic()
            os.kill(h.pid, signal.SIGKILL)
            h.wait()  # reaped at once, as a supervisor would
            took = self.wait_in_flight(want, 3.0)
            lat.append(None if took is None else time.monotonic() - t0)
            info = self.inspect()
            pids = [l["pid"] for l in info["leases"]]
            check(took is not None and h.pid not in pids,
                  "kill -9 of permit holder %d (pid %d): permit back, "
                  "in_flight %d" % (n + 1, h.pid, info["in_flight"]))
        ms = [None if x is None else x * 1000.0 for x in lat]
        note("permit back after kill -9 (breakerd --interval 50ms): %s ms" %
             ", ".join("never" if x is None else "%.1f" % x for x in ms))
        check(all(x is not None and x < RECLAIM_MS for x in ms),
              "every permit was back within %d ms" % RECLAIM_MS)
        info = self.inspect()
        check(info["counters"]["reclaimed"] >= LIMIT,
              "the breaker counted %d reclaimed leases"
              % info["counters"]["reclaimed"])
        r = self.run_bctl("exec", "bh", "--", "true")
        check(r.returncode == 0, "the bulkhead admits calls again (exit %d)"
              % r.returncode)

    # -- driver -------------------------------------------------------------
    def run(self):
        r = self.run_bctl("config", "bh", "--max-concurrent", str(LIMIT),
                          "--failure-threshold", "1000000")
        if r.returncode != 0:
            check(False, "bctl config: " + r.stderr.strip())
            return
        self.start_upstream()
        self.callers()
        holders = self.start_holders()
        check(self.wait_in_flight(LIMIT, 5.0) is not None,
              "three holders took the three permits")
        self.refused_fast()
        self.start_daemon()
        self.reclaim(holders)

    def cleanup(self):
        for pf in self.pidfiles:
            try:
                with open(pf) as f:
                    os.kill(int(f.read().strip()), signal.SIGKILL)
            except (OSError, ValueError):
                pass
        for p in self.procs:
            if p.poll() is None:
                if p is self.upstream:
                    p.stdin.close()
                p.send_signal(signal.SIGTERM if p is not self.upstream
                              else signal.SIGKILL)
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        try:
            os.unlink("/dev/shm" + self.shm)
        except OSError:
            pass
        subprocess.run(["rm", "-rf", self.tmp])


def main():
    if len(sys.argv) != 3:
        print("usage: it_bulkhead_upstream.py BCTL BREAKERD", file=sys.stderr)
        return 2
    t = Test(sys.argv[1], sys.argv[2])
    signal.signal(signal.SIGALRM, lambda *a: sys.exit("watchdog: 100 s"))
    signal.alarm(100)
    try:
        t.run()
    except Exception as e:  # a harness error is a failure, after cleanup
        check(False, "harness: %s: %s" % (type(e).__name__, e))
    finally:
        t.cleanup()
    print("%s" % ("all checks passed" if failures == 0 else
                  "%d check(s) failed" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
