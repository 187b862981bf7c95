"""Fork safety: a fork()ed child shares the parent's state but never its
leases; multiprocessing children (fork, forkserver, spawn) open the breaker
for the parent."""

import gc
import json
import multiprocessing
import os
import signal
import time
import warnings

import pytest

import breakerd
import _mp_worker
from conftest import fail_times


def in_child(fn):
    """Run fn() in a fork()ed child; return what it returned (JSON)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        signal.alarm(60)  # a hung child dies: the parent then reads EOF
        os.close(r)
        try:
            out = {"ok": fn()}
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            out = {"error": f"{type(e).__name__}: {e}"}
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    out = json.loads(data)
    assert "error" not in out, out["error"]
    return out["ok"]


def test_child_sees_the_parents_state(realseg):
    br = realseg.breaker("f/a", failure_threshold=2, open="1h", max_open="2h")
    fail_times(br, 2)

    def child():
        try:
            br.acquire()
        except breakerd.CircuitOpen as e:
            return [br.state, e.cause]
        return ["admitted"]

    assert in_child(child) == ["open", "open"]


def test_child_cannot_release_the_parents_permit(realseg):
    br = realseg.breaker("f/b", max_concurrent=2)
    p = br.acquire()
    assert br.info()["in_flight"] == 1

    def child():
        counted = p.success()          # the parent's lease: not ours
        again = p.failure()            # and still a no-op
        mine = br.acquire()            # the child's own permit works
        mine_counted = mine.success()
        return [counted, again, p.counted, br.info()["in_flight"], mine_counted]

    assert in_child(child) == [False, False, False, 1, True]
    info = br.info()
    assert info["in_flight"] == 1       # the parent's lease is still held
    assert info["counters"]["successes"] == 1 and info["counters"]["stale"] == 1
    assert p.success() is True          # ... and the parent releases it
    assert br.info()["in_flight"] == 0


def test_child_collecting_an_inherited_permit_frees_nothing(realseg):
    br = realseg.breaker("f/c", max_concurrent=1)
    holder = [br.acquire()]

    def child():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            holder.clear()
            gc.collect()
        return [len(w), br.info()["in_flight"], br.info()["counters"]["cancelled"]]

    assert in_child(child) == [0, 1, 0]
    holder[0].success()


def test_child_of_a_with_block(realseg):
    br = realseg.breaker("f/d", max_concurrent=1, failure_threshold=1)
    with br:
        # a child forked inside the parent's `with` leaves it to the parent
        assert in_child(lambda: br.info()["in_flight"]) == 1
    assert br.info()["in_flight"] == 0 and br.state == "closed"


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_multiprocessing_children_open_the_breaker(realseg, method):
    name = f"f/mp-{method}"
    br = realseg.breaker(name, failure_threshold=4, open="1h", max_open="2h")
    ctx = multiprocessing.get_context(method)
    with ctx.Pool(2) as pool:
        # *_async + timeout: a crashed worker must fail the test, not hang it
        results = pool.starmap_async(_mp_worker.fail_until_open,
                                     [(realseg.shm, name, 2)] * 2).get(timeout=120)
        assert len({pid for pid, _ in results}) >= 1
        assert all(pid != os.getpid() for pid, _ in results)
        assert br.state == "open"  # 2 + 2 failures from the children
        assert pool.apply_async(_mp_worker.state_of,
                                (realseg.shm, name)).get(timeout=120) == "open"
    assert br.info()["counters"]["failures"] == 4


def test_fork_context_child_uses_the_inherited_breaker(realseg):
    br = realseg.breaker("f/inherit", failure_threshold=1, open="1h", max_open="2h")

    def target():
        fail_times(br, 1)

    p = multiprocessing.get_context("fork").Process(target=target)
    p.start()
    p.join(60)
    if p.exitcode is None:
        p.kill()
        p.join()
    assert p.exitcode == 0
    assert br.state == "open"


def test_quorum_needs_failures_from_two_processes(realseg):
    br = realseg.breaker("f/quorum", failure_threshold=2, min_distinct_processes=2,
                         window="1h", open="1h", max_open="2h")
    fail_times(br, 3)
    assert br.state == "closed"  # one process cannot open it for all
    assert in_child(lambda: (fail_times(br, 1), br.state)[1]) == "open"
    assert br.info()["window"]["distinct_failing_processes"] == 2


def test_no_fork_of_the_test_process_meets_a_thread_still_exiting():
    """The ASan stage hung for its whole 1,800 s (CI, stop 29): GCC 12's
    ASan runtime takes no allocator lock across fork(), so a child forked
    while a just-joined thread was still tearing down (its allocator cache
    drained under the allocator's lock) blocked forever at its first
    malloc, and the parent's unbounded wait with it (gdb on such a child:
    __asan::Allocator::Allocate -> SizeClassAllocator64::GetFromAllocator
    -> Mutex::Lock). conftest's at-fork hook now waits until every OS
    thread of the process is a live Python thread. Seen from the parent
    just after each fork() of this loop, without the hook some forks had
    a thread still exiting, and under ASan a child now and then hung."""
    import threading

    exiting, hung, on = [], 0, [True]

    def after():  # a hook cannot be unregistered: it goes quiet instead
        if on[0]:
            exiting.append(len(os.listdir("/proc/self/task")) - threading.active_count())

    os.register_at_fork(after_in_parent=after)
    try:
        for _ in range(100):
            ts = [threading.Thread(target=lambda: [bytearray(1000) for _ in range(200)])
                  for _ in range(8)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            pid = os.fork()
            if pid == 0:
                [bytearray(100) for _ in range(1000)]  # malloc, as a real child does
                os._exit(0)
            end = time.monotonic() + 10
            while os.waitpid(pid, os.WNOHANG)[0] == 0:
                if time.monotonic() > end:
                    hung += 1
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    break
                time.sleep(0.001)
    finally:
        on[0] = False
    assert len(exiting) == 100
    assert (sum(1 for n in exiting if n > 0), hung) == (0, 0), exiting
