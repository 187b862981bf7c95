"""The fleet fixtures' own behaviour (pyint_fixtures)."""

import os
import signal
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyint_fixtures  # noqa: E402  (installs the SIGTERM handler)


def test_a_child_forked_from_the_test_process_dies_of_sigterm():
    """pyint_fixtures turns SIGTERM into KeyboardInterrupt in the test
    process; a forked child must not inherit that, or a multiprocessing
    Pool's terminate() leaves a worker running Python cleanup that may
    block forever (the plain stage's Pool test hung 300 s on it)."""
    assert signal.getsignal(signal.SIGTERM) is pyint_fixtures._sigterm
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.write(w, b"r")
            signal.alarm(30)
            while True:
                signal.pause()
        finally:  # reached only if SIGTERM became an exception
            os._exit(7)
    os.close(w)
    assert os.read(r, 1) == b"r"
    os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + 30
    while (st := os.waitpid(pid, os.WNOHANG))[0] == 0:
        if time.monotonic() > end:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the child ignored SIGTERM for 30 s")
        time.sleep(0.01)
    assert os.WIFSIGNALED(st[1]) and os.WTERMSIG(st[1]) == signal.SIGTERM, \
        f"child exited {os.waitstatus_to_exitcode(st[1])}, not by SIGTERM"
