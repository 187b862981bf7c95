"""gunicorn workers share one breaker, whether the segment was attached in
the master before fork (--preload) or in each worker after it."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

import breakerd

pytest.importorskip("gunicorn")

APP = '''
import os
import breakerd

SHM = os.environ["BRKPY_GUNICORN_SHM"]
seg = breakerd.attach(SHM) if os.environ.get("BRKPY_ATTACH_AT_IMPORT") == "1" else None
ATTACHED_IN = os.getpid() if seg is not None else None


def app(environ, start_response):
    global seg
    if seg is None:
        seg = breakerd.attach(SHM)
    br = seg.breaker("g/api", failure_threshold=4, open="1h", max_open="2h")
    try:
        with br:
            if environ["PATH_INFO"] == "/fail":
                raise ConnectionError("upstream down")
        status, body = "200 OK", b"ok"
    except ConnectionError:
        status, body = "502 Bad Gateway", b"failed"
    except breakerd.Refused as e:
        status, body = "503 Service Unavailable", e.cause.encode()
    start_response(status, [("Content-Type", "text/plain"), ("X-Pid", str(os.getpid())),
                            ("X-Attached-In", str(ATTACHED_IN))])
    return [body]
'''


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), dict(e.headers)


@pytest.mark.parametrize("preload", [True, False], ids=["preload", "attach-in-worker"])
def test_gunicorn_workers_share_one_breaker(tmp_path, shm, preload):
    (tmp_path / "brkapp.py").write_text(APP)
    port = free_port()
    env = dict(os.environ, BRKPY_GUNICORN_SHM=shm,
               BRKPY_ATTACH_AT_IMPORT="1" if preload else "0")
    args = [sys.executable, "-m", "gunicorn", "-w", "2", "-b", f"127.0.0.1:{port}",
            "--chdir", str(tmp_path), "--graceful-timeout", "5", "brkapp:app"]
    if preload:
        args.insert(3, "--preload")
    log = open(tmp_path / "gunicorn.log", "w")
    g = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT,
                         start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                status, _, hdr = get(base + "/")
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if g.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("gunicorn did not start: " + (tmp_path / "gunicorn.log").read_text())
                time.sleep(0.1)
        assert status == 200
        if preload:  # attached in the master, before the workers were forked
            assert hdr["X-Attached-In"] == str(g.pid)
        else:
            assert hdr["X-Attached-In"] == "None"
        pids = {hdr["X-Pid"]}
        for _ in range(4):
            status, _, hdr = get(base + "/fail")
            assert status == 502
            pids.add(hdr["X-Pid"])
        status, body, hdr = get(base + "/")
        assert (status, body) == (503, "open")  # opened for every worker
        assert str(g.pid) not in pids  # served by the workers, not the master
    finally:
        os.killpg(g.pid, signal.SIGTERM)
        try:
            g.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(g.pid, signal.SIGKILL)
            g.wait()
        log.close()
    with breakerd.attach(shm) as seg:
        info = seg.breaker("g/api").info()
    assert info["state"] == "open"
    assert info["counters"]["failures"] == 4 and info["counters"]["successes"] == 1
    assert info["in_flight"] == 0 and info["counters"]["cancelled"] == 0
