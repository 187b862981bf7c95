"""Listeners: callbacks that hear every process's events on the segment
(transitions, trips, resets, fleet decisions) as they are written, without
polling (brk_events_wait(): a futex on the event ring, docs/design/
observability.md "Listeners").

One background thread per Segment object per process (started by the
first add_listener(), a daemon thread named "breakerd-listeners") sleeps
in the kernel until an event is written; it then reads the new events and
calls each matching callback with the event dict (Segment.events()'s
shape), in ring order, one at a time:

* serialised: callbacks never run concurrently with each other (one
  thread); they run concurrently with the rest of the program;
* a callback that raises is logged (logger "breakerd.listeners", with the
  traceback) and counted in ``errors``; it stays registered and the
  others still get the event;
* a slow callback delays the ones after it and the next events; the ring
  keeps the last 4096 events, so a callback slower than the events
  arrive makes the thread skip what was overwritten (counted in
  ``lost``), never block a writer;
* fork: the child has no listener thread and no listeners (they belong to
  the parent's thread); a child that wants them calls add_listener().
"""

import logging
import os
import threading
import time
import weakref

log = logging.getLogger("breakerd.listeners")


def _name_matches(ev_name, names):
    for n in names:
        if ev_name == n or ev_name.startswith(n + "/"):
            return True
    return False


class Listener:
    """A registered callback; ``remove()`` unregisters it."""

    __slots__ = ("callback", "names", "kinds", "start", "_hub", "__weakref__")

    def __init__(self, hub, callback, names, kinds, start):
        self._hub = hub
        self.callback = callback
        self.names = names
        self.kinds = kinds
        self.start = start

    def matches(self, ev):
        if ev["seq"] < self.start:
            return False
        if self.names is not None and not _name_matches(ev["name"], self.names):
            return False
        if self.kinds is not None and ev["reason"] not in self.kinds \
                and ev["to"] not in self.kinds:
            return False
        return True

    def remove(self):
        """Stop calling it; True if it was registered."""
        return self._hub.remove(self)

    def __repr__(self):
        return f"<breakerd.Listener {self.callback!r} names={self.names} kinds={self.kinds}>"


class Hub:
    """The listeners of one Segment in this process and their thread."""

    def __init__(self, segment):
        self._seg = weakref.ref(segment)
        self._core = segment._s
        self._lock = threading.Lock()
        self._listeners = ()
        self._thread = None
        self._stop = False
        self._pid = os.getpid()
        self._cursor = 0
        self.wakeups = 0      # returns from the kernel wait
        self.delivered = 0    # callback calls
        self.errors = 0       # callbacks that raised
        self.lost = 0         # events overwritten before the thread read them

    def stats(self):
        return {"wakeups": self.wakeups, "delivered": self.delivered,
                "errors": self.errors, "lost": self.lost,
                "listeners": len(self._listeners),
                "running": self._thread is not None and self._thread.is_alive()}

    def _head(self):
        return self._core.info()["events_written"] + 1

    def add(self, callback, names, kinds):
        if not callable(callback):
            raise TypeError(f"a listener must be callable, not {type(callback).__name__}")
        names = _set_of(names, "names")
        kinds = _set_of(kinds, "kinds")
        with self._lock:
            if self._pid != os.getpid():  # a fork()ed child: start afresh
                self._reset_after_fork()
            start = self._head()
            lst = Listener(self, callback, names, kinds, start)
            self._listeners = self._listeners + (lst,)
            if self._thread is None or not self._thread.is_alive():
                self._cursor = start
                self._stop = False
                self._thread = threading.Thread(target=self._run, name="breakerd-listeners",
                                                daemon=True)
                self._thread.start()
            else:
                self._kick()  # it may be waiting on a narrower name
        return lst

    def remove(self, lst):
        with self._lock:
            if lst not in self._listeners:
                return False
            self._listeners = tuple(x for x in self._listeners if x is not lst)
            if not self._listeners:
                self._stop = True
            self._kick()
        return True

    def _kick(self):
        try:
            self._core._events_kick()
        except Exception:  # closed or read-only: the thread sees _stop
            pass

    def stop(self, timeout=5.0):
        """Stop the thread (Segment.close() calls this first)."""
        with self._lock:
            self._stop = True
            self._listeners = ()
            t = self._thread
            if self._pid == os.getpid():
                self._kick()
        if t is not None and t is not threading.current_thread() and self._pid == os.getpid():
            # a kick sent while the thread was between its stop check and
            # the kernel wait is not seen by that wait: kick until it ends
            deadline = time.monotonic() + timeout
            while t.is_alive() and time.monotonic() < deadline:
                self._kick()
                t.join(0.02)

    def _reset_after_fork(self):
        self._listeners = ()
        self._thread = None
        self._stop = False
        self._pid = os.getpid()

    def _wait_name(self, listeners):
        """The one name every listener filters on, for the kernel-side
        filter; else None (all events, filtered here)."""
        name = None
        for lst in listeners:
            if lst.names is None or len(lst.names) != 1:
                return None
            (n,) = lst.names
            if name is not None and n != name:
                return None
            name = n
        return name

    def _run(self):
        core = self._core
        while True:
            listeners = self._listeners
            if self._stop or not listeners:
                return
            try:
                _rc, self._cursor = core._events_wait(self._cursor, self._wait_name(listeners), -1)
            except Exception:
                return  # the segment was closed under us
            self.wakeups += 1
            if self._stop:
                return
            try:
                evs, nxt, lost = core.events(self._cursor)
            except Exception:
                return
            self.lost += lost
            self._cursor = nxt
            for ev in evs:
                for lst in self._listeners:
                    if not lst.matches(ev):
                        continue
                    self.delivered += 1
                    try:
                        lst.callback(ev)
                    except BaseException:  # never kill the thread
                        self.errors += 1
                        log.exception("breakerd listener %r raised on event %s of %s",
                                      lst.callback, ev["seq"], ev["name"])


def _set_of(v, what):
    if v is None:
        return None
    if isinstance(v, str):
        return frozenset((v,))
    try:
        out = frozenset(v)
    except TypeError:
        raise TypeError(f"{what} must be a string, an iterable of strings or None, "
                        f"not {type(v).__name__}") from None
    for x in out:
        if not isinstance(x, str):
            raise TypeError(f"{what} must hold strings, not {type(x).__name__}")
    return out
