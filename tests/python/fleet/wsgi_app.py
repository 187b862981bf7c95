"""The WSGI app of the gunicorn fleet test.

Each pre-forked sync worker serves ``GET /call`` by calling the upstream
(``$FLEET_UPSTREAM/work``) through a requests Session with
``BreakerAdapter`` mounted, sending its pid in ``X-Worker-Pid``; with
``FLEET_BREAKER=off`` it calls the upstream with no breaker at all (the
"without breakerd" fleet). The answer is one line: ``sent STATUS PID``,
``refused CAUSE WAIT PID`` or ``error EXCEPTION PID``. ``GET /health``
answers ``ok PID``.

Configuration from the environment: FLEET_UPSTREAM, BREAKERD_SHM (the
segment), FLEET_BREAKER_NAME, FLEET_BREAKER_KWARGS (JSON), FLEET_BREAKER.
The segment is attached lazily in each worker (the adapter gets its name).
"""

import json
import os

import requests

import breakerd
from breakerd.integrations.requests import BreakerAdapter

UPSTREAM = os.environ["FLEET_UPSTREAM"]
NAME = os.environ.get("FLEET_BREAKER_NAME", "fleet/upstream")
KWARGS = json.loads(os.environ.get("FLEET_BREAKER_KWARGS", "{}"))
USE_BREAKER = os.environ.get("FLEET_BREAKER", "on") != "off"

_session = None


def session():
    global _session
    if _session is None:
        s = requests.Session()
        if USE_BREAKER:
            s.mount("http://", BreakerAdapter(os.environ["BREAKERD_SHM"],
                                              name=lambda req: NAME,
                                              breaker_kwargs=KWARGS))
        _session = s
    return _session


def app(environ, start_response):
    pid = os.getpid()
    path = environ.get("PATH_INFO", "")
    if path == "/health":
        body = "ok %d\n" % pid
    elif path == "/call":
        try:
            r = session().get(UPSTREAM + "/work", headers={"X-Worker-Pid": str(pid)},
                              timeout=30)
            body = "sent %d %d\n" % (r.status_code, pid)
        except breakerd.Refused as e:
            body = "refused %s %.3f %d\n" % (e.cause, e.wait, pid)
        except requests.RequestException as e:
            body = "error %s %d\n" % (type(e).__name__, pid)
    else:
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"no such path\n"]
    data = body.encode()
    start_response("200 OK", [("Content-Type", "text/plain"),
                              ("Content-Length", str(len(data)))])
    return [data]
