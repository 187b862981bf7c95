"""Process helpers of the fleet tests: children that die with the test,
the breakerd daemon, segment names, bounded waits."""

import itertools
import os
import signal
import subprocess
import sys
import time

# The interpreter running the tests: /usr/bin/python3 or the suite's venv
# made from it with --system-site-packages (both see Debian's gunicorn and
# celery); never a python3 found on PATH.
PYTHON = sys.executable or "/usr/bin/python3"
HERE = os.path.dirname(os.path.abspath(__file__))
_seq = itertools.count()


def spawn(argv, **kw):
    """Popen in a new session that dies with us: setpriv(1) sets
    PR_SET_PDEATHSIG (SIGKILL on our death, so nothing outlives a killed
    test run) and execs ``argv``. No preexec_fn: Python code in a child
    forked from a threaded process (the upstream's server thread) is not
    fork-safe, and under the ASan stage's allocator it could hang."""
    return subprocess.Popen(["setpriv", "--pdeathsig", "KILL", "--", *argv],
                            start_new_session=True, **kw)


def stop(proc, grace=3.0):
    """SIGTERM the process group of ``proc`` (one we spawned), then SIGKILL."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(5)


def segment_name(tag):
    return "/brkfleet-%s-%d-%d" % (tag, os.getpid(), next(_seq))


def unlink_segment(name):
    try:
        os.unlink("/dev/shm/" + name.lstrip("/"))
    except FileNotFoundError:
        pass


def wait_until(pred, timeout, interval=0.01, what="condition"):
    """Poll ``pred()`` until true; AssertionError naming ``what`` after ``timeout`` s."""
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > end:
            raise AssertionError("timed out after %.1f s waiting for %s" % (timeout, what))
        time.sleep(interval)


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return []


def daemon_path():
    """build/daemon/breakerd: $BREAKERD_DAEMON, else next to the bctl the
    python suite passes ($BRKPY_BCTL = BUILD/tools/bctl), else
    ./daemon/breakerd (the suite runs in the build dir)."""
    path = os.environ.get("BREAKERD_DAEMON")
    if path:
        return path
    bctl = os.environ.get("BRKPY_BCTL")
    if bctl:
        return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(bctl))),
                            "daemon", "breakerd")
    return os.path.abspath(os.path.join("daemon", "breakerd"))


def start_daemon(shm, interval="50ms"):
    """Start build/daemon/breakerd on ``shm``; returns the Popen (stderr to a pipe)."""
    path = daemon_path()
    if not path or not os.access(path, os.X_OK):
        return None
    p = spawn([path, "--shm", shm, "--interval", interval],
              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: os.path.exists("/dev/shm/" + shm.lstrip("/")) or p.poll() is not None,
               5, what="breakerd to create " + shm)
    assert p.poll() is None, "breakerd exited with %s" % p.returncode
    return p


def child_env(**extra):
    """Our environment, with this directory and the breakerd package under
    test first on PYTHONPATH (children run /usr/bin/python3 too)."""
    import breakerd
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(breakerd.__file__)))
    old = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([HERE, pkg_parent] + old)
    env.update({k: str(v) for k, v in extra.items()})
    return env
