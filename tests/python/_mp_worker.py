"""Functions that multiprocessing children (fork, forkserver, spawn) run:
importable by name, attach the segment themselves."""

import os

import breakerd


def fail_until_open(shm, name, n):
    """Attach ``shm``, record ``n`` failures on ``name``; return (pid, state)."""
    with breakerd.attach(shm) as seg:
        br = seg.breaker(name, failure_threshold=n, open="1h", max_open="2h")
        for _ in range(n):
            try:
                with br:
                    raise ConnectionError("down")
            except ConnectionError:
                pass
        return os.getpid(), br.state


def state_of(shm, name):
    with breakerd.attach(shm) as seg:
        br = seg.breaker(name)
        try:
            with br:
                return "admitted"
        except breakerd.CircuitOpen as e:
            return e.cause
