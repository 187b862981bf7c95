"""The Celery app of the Celery fleet test (a prefork worker runs it).

Broker: kombu's filesystem transport in $FLEET_DIR/broker (no server); no
result backend (task ids are tracked through files). The task ``call``
calls the upstream ($FLEET_UPSTREAM/work) through requests +
BreakerAdapter on the segment $BREAKERD_SHM, sending X-Task-Id; a
refusal or a 429 becomes ``task.retry(countdown=...)`` through
``retry_on_refusal``. Every attempt appends a line to
$FLEET_DIR/attempts.log (``wall_time task_id retries pid event``); a task
that got its 200 creates $FLEET_DIR/done/<task_id> with O_EXCL, and a
second completion of the same id creates $FLEET_DIR/dup/<task_id>.<pid>.
"""

import os
import time

import requests
from celery import Celery

import breakerd
from breakerd.integrations.celery import retry_on_refusal
from breakerd.integrations.requests import BreakerAdapter

DIR = os.environ["FLEET_DIR"]
UPSTREAM = os.environ.get("FLEET_UPSTREAM", "http://127.0.0.1:9")
BROKER = os.path.join(DIR, "broker")

app = Celery("fleet")
app.conf.update(
    broker_url="filesystem://",
    broker_transport_options={"data_folder_in": BROKER, "data_folder_out": BROKER,
                              "processed_folder": os.path.join(DIR, "processed"),
                              "store_processed": False, "polling_interval": 0.05},
    task_ignore_result=True,
    result_backend=None,
    worker_hijack_root_logger=False,
    broker_connection_retry_on_startup=True,
)

_session = None


def session():
    global _session
    if _session is None:
        s = requests.Session()
        s.mount("http://", BreakerAdapter(os.environ.get("BREAKERD_SHM"),
                                          name=lambda req: "fleet/celery-upstream",
                                          breaker_kwargs={"failure_threshold": 50,
                                                          "max_wait": "30s",
                                                          # the Retry-After's cooling, not
                                                          # the implicit pace (issue 21)
                                                          "implicit_pace": False}))
        _session = s
    return _session


def log(task, event):
    line = "%.6f %s %d %d %s\n" % (time.time(), task.request.id, task.request.retries,
                                   os.getpid(), event)
    fd = os.open(os.path.join(DIR, "attempts.log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


@app.task(bind=True, max_retries=None, name="fleet.call")
@retry_on_refusal()
def call(self):
    try:
        r = session().get(UPSTREAM + "/work", headers={"X-Task-Id": self.request.id,
                                                       "X-Worker-Pid": str(os.getpid())},
                          timeout=10)
    except breakerd.Refused as e:
        log(self, "refused:%s:%.3f" % (e.cause, e.wait))
        raise
    log(self, "status:%d" % r.status_code)
    r.raise_for_status()           # a 429 raises HTTPError -> task.retry(countdown)
    try:
        fd = os.open(os.path.join(DIR, "done", self.request.id), os.O_CREAT | os.O_EXCL)
        os.close(fd)
    except FileExistsError:
        open(os.path.join(DIR, "dup", "%s.%d" % (self.request.id, os.getpid())), "w").close()
    return r.status_code
