"""C programs (bctl, and the commands bctl exec runs), bctl and Python
processes on one segment see one state."""

import subprocess
import sys

import pytest

import breakerd
from conftest import fail_times


def test_bctl_trip_refuses_python(realseg, bctl):
    br = realseg.breaker("x/a")
    bctl.run("trip", "x/a", "--for", "30s")
    with pytest.raises(breakerd.CircuitOpen) as ei:
        with br:
            pass
    assert ei.value.cause == "open" and ei.value.breaker == "x/a"
    assert 10 <= ei.value.wait <= 37.5  # 30 s less the time since, plus jitter
    bctl.run("reset", "x/a")
    with br:
        pass
    bctl.run("force-open", "x/a")
    with pytest.raises(breakerd.CircuitOpen) as ei:
        br.acquire()
    assert ei.value.cause == "forced_open"


def test_python_failures_open_for_bctl(realseg, bctl):
    br = realseg.breaker("x/b", failure_threshold=3, open="1h", max_open="2h")
    fail_times(br, 3)
    info = bctl.json("inspect", "x/b")
    assert info["state"] == "open" and info["counters"]["failures"] == 3
    # a command run through the breaker is not run at all
    p = bctl.run("exec", "x/b", "--", "true", check=False)
    assert p.returncode == 75, p.stderr


def test_c_command_failures_open_for_python(realseg, bctl):
    br = realseg.breaker("x/c", failure_threshold=2, open="1h", max_open="2h")
    for _ in range(2):
        assert bctl.run("exec", "x/c", "--", "false", check=False).returncode == 1
    assert br.state == "open"
    assert br.info()["counters"]["failures"] == 2


def test_python_retry_after_cools_bctl(realseg, bctl):
    br = realseg.breaker("x/d", max_wait="1m", implicit_pace=False)  # a 429 stays a failure (the implicit pace off)
    br.acquire().report_http(429, {"Retry-After": "30"})
    p = bctl.run("exec", "x/d", "--", "true", check=False)
    assert p.returncode == 75 and "cool" in p.stderr.lower() + p.stdout.lower()


def test_bctl_config_reaches_python(realseg, bctl):
    bctl.run("config", "x/e", "--max-concurrent", "1")
    br = realseg.breaker("x/e", max_concurrent=5)  # exists: bctl's setting holds
    assert br.info()["config"]["max_concurrent"] == 1
    with br:
        p = bctl.run("exec", "x/e", "--", "true", check=False)
        assert p.returncode == 75
    assert bctl.run("exec", "x/e", "--", "true", check=False).returncode == 0


def test_another_python_process_sees_the_state(realseg):
    br = realseg.breaker("x/f", failure_threshold=1, open="1h", max_open="2h")
    fail_times(br, 1)
    code = ("import breakerd, sys\n"
            "seg = breakerd.attach(sys.argv[1])\n"
            "try:\n"
            "    seg.breaker('x/f').acquire()\n"
            "except breakerd.CircuitOpen as e:\n"
            "    print(e.cause)\n")
    out = subprocess.run([sys.executable, "-c", code, realseg.shm], capture_output=True,
                         text=True, timeout=60)
    assert out.stdout.strip() == "open", out.stderr
