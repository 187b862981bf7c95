"""Many threads on one Breaker object: every permit is per call, no update
is lost."""

import threading

import breakerd
from breakerd import _breaker

THREADS = 8
ROUNDS = 2000


def run_threads(fn):
    errors = []
    start = threading.Barrier(THREADS)

    def body(i):
        try:
            start.wait()
            fn(i)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=body, args=(i,)) for i in range(THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


def test_with_from_many_threads_adds_up(realseg):
    br = realseg.breaker("t/a", failure_threshold=10**6)

    def work(i):
        for n in range(ROUNDS):
            with br as p:
                assert _breaker._active()[-1][1] is p  # this thread's own
                if n % 4 == 0:
                    p.healthy_error()

    run_threads(work)
    c = br.info()["counters"]
    total = THREADS * ROUNDS
    assert c["allowed"] == total
    assert c["healthy_errors"] == total // 4
    assert c["successes"] == total - total // 4
    assert c["stale"] == 0 and c["cancelled"] == 0
    assert br.info()["in_flight"] == 0


def test_bulkhead_from_many_threads(realseg):
    br = realseg.breaker("t/b", max_concurrent=3)
    refused = [0] * THREADS

    def work(i):
        for _ in range(ROUNDS // 4):
            try:
                with br:
                    assert br.info()["in_flight"] <= 3
            except breakerd.BulkheadFull:
                refused[i] += 1

    run_threads(work)
    c = br.info()["counters"]
    assert c["allowed"] + c["rejected_full"] == THREADS * (ROUNDS // 4)
    assert c["rejected_full"] == sum(refused)
    assert c["successes"] == c["allowed"]
    assert br.info()["in_flight"] == 0
