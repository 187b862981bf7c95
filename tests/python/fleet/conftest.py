"""Fleet tests: real gunicorn / Celery / APScheduler processes on loopback.
A SIGTERM (meson's timeout) becomes an exception so every test's finally
block stops the processes it started; children also get PDEATHSIG."""

import os
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _sigterm(signum, frame):
    raise KeyboardInterrupt("SIGTERM")


signal.signal(signal.SIGTERM, _sigterm)
