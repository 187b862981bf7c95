"""Segment and attach(): an attached segment, where breakers, buckets,
budgets and paces are got or created, and jobs admitted."""

import time

from . import _core
from ._admission import ATTEMPTS, Admission
from ._breaker import Breaker
from ._bucket import Bucket
from ._budget import Budget
from ._classify import Matcher
from ._durations import to_ms
from ._pace import Pace, priority_code
from . import _settings


class Segment:
    """An attached segment; a context manager that closes it."""

    __slots__ = ("_s", "_clock", "lost_events", "_hub", "__weakref__")

    def __init__(self, core, clock=None):
        self._s = core
        self._clock = clock  # a FakeClock: nothing sleeps on it
        self.lost_events = 0
        self._hub = None

    @property
    def shm(self):
        return self._s.shm

    @property
    def closed(self):
        return self._s.closed

    @property
    def readonly(self):
        return self._s.readonly

    def close(self):
        if self._hub is not None:
            self._hub.stop()  # its thread sleeps in the segment
        self._s.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return f"<breakerd.Segment {self.shm}{' closed' if self.closed else ''}>"

    def breaker(self, name, *, failure=(Exception,), exclude=(), ignore=(),
                raise_on_trip=False, **settings):
        """Get or create the breaker ``name``; ``settings`` apply only if
        this call creates the record (see Breaker.configure; the Breaker's
        ``created`` says whether it did). ``raise_on_trip=True``: the call
        whose failure opens the breaker raises CircuitOpen (its own
        exception as the __context__) instead of that exception, as
        pybreaker's throw_new_error_on_trip (a property of this handle,
        not of the record)."""
        f = Matcher(failure, "failure")
        e = Matcher(exclude, "exclude")
        i = Matcher(ignore, "ignore")
        cfg = _settings.to_config(settings)
        full = _core.config_defaults()
        full.update(cfg)
        _settings.check(full, settings)
        return Breaker(self._s.breaker(name, cfg), self, f, e, i, raise_on_trip)

    def bucket(self, name, *, rate, burst):
        return Bucket(self._s.bucket(name, rate, burst), self)

    def budget(self, name, *, floor=10.0, ratio=0.2):
        return Budget(self._s.budget(name, floor, ratio), self)

    def pace(self, name, *, ceiling, floor=None, burst=None, reserve_pct=None,
             fleet=None):
        """Get or create the pace ``name`` (requests/s; the settings apply
        only if this call creates it: see Pace.update). ``floor`` defaults
        to ceiling/100, ``burst`` to 2, ``reserve_pct`` to 0, ``fleet`` to
        False (True: breakerd --fleet shares its cuts)."""
        return Pace(self._s.pace(name, ceiling, floor, burst, reserve_pct, fleet),
                    self)

    def health(self, name):
        """The health of ``name``'s subtree (records named name, name/...,
        name:...): a dict with "state" (live, delayed, partial,
        unavailable, fallback), "code", "by" (the record that decided),
        "since_age_ms" (None: not recorded), "children",
        "children_unavailable" -- what `bctl health NAME --json` prints.
        Records a change (one event per transition, whoever noticed it).
        LookupError if no record of the subtree exists."""
        return self._s.health(name)

    def set_fallback(self, name, on):
        """Say that ``name`` is (on=True) or is no longer served by its
        fallback: its health is "fallback" until cleared. True if this
        changed it, False if it already was so. LookupError: no breaker
        named so."""
        return self._s.set_fallback(name, on)

    def now_ns(self):
        """The segment clock (ns), the one PaceToken.taken_at is on."""
        return self._s.now_ns()

    def admit(self, *, breaker=None, pace=None, budget=None, attempt="first",
              priority="normal", deadline=None, max_wait=0):
        """Let a job through every gate in one fixed order (brk_admit(),
        docs/design/limits.md "Admission"): (1) EXPIRED if the wait it faces now
        would end after ``deadline``; (2) the breaker (open, cooling,
        bulkhead); (3) the pace (a slot at the learned rate); (4) the
        retry budget (``attempt="retry"`` spends a retry, "first" deposits).
        Waits (an open period or cool-until left, a pace slot) are slept up
        to ``max_wait`` in all (seconds or a duration string; 0: never
        sleeps; never on a FakeClock segment, where the refusal comes at
        once with ``wait``); ``deadline``: seconds from now (or a duration
        string), None for none. ``priority="high"`` may use the shares the
        breaker's and the pace's reserve_pct keep back. Returns an
        Admission; a refusal raises the Refused subclass of its gate
        (DeadlineExpired, CircuitOpen, Cooling, NoTokens, BulkheadFull,
        RetryDeferred) with ``.code`` ("EXPIRED", "BREAKER_OPEN",
        "COOLING", "RATE_LIMITED", "BULKHEAD_FULL", "DEFERRED",
        "CONTENDED") and ``.wait``; nothing is held after a refusal."""
        if breaker is not None and not isinstance(breaker, Breaker):
            raise TypeError(f"breaker must be a breakerd.Breaker or None, not "
                            f"{type(breaker).__name__}")
        if pace is not None and not isinstance(pace, (Pace, Bucket)):
            raise TypeError(f"pace must be a breakerd.Pace (or Bucket) or None, not "
                            f"{type(pace).__name__}")
        if budget is not None and not isinstance(budget, Budget):
            raise TypeError(f"budget must be a breakerd.Budget or None, not "
                            f"{type(budget).__name__}")
        if not isinstance(attempt, str):
            raise TypeError(f"attempt must be 'first' or 'retry', not {type(attempt).__name__}")
        if attempt not in ATTEMPTS:
            raise ValueError(f"attempt must be 'first' or 'retry', not {attempt!r}")
        prio = priority_code(priority)
        wait_ms = 0 if max_wait == 0 and type(max_wait) is int else to_ms(max_wait, "max_wait")
        deadline_ns = 0
        if deadline is not None:
            deadline_ns = self._s.now_ns() + to_ms(deadline, "deadline") * 1000000
        core = self._s._admit(breaker._b if breaker is not None else None,
                              pace._k if pace is not None else None,
                              budget._g if budget is not None else None,
                              ATTEMPTS[attempt], prio, deadline_ns, wait_ms)
        return Admission(core, breaker, pace, budget)

    def events(self, cursor=0):
        """(events, next_cursor): the events with sequence >= cursor still
        in the ring, oldest first. Events overwritten before they could be
        read are added to ``lost_events``. Each is a dict (seq, wall_ms,
        mono_ns, name, from, to, reason, pid, value, origin): ``origin``
        is "" for this host's own decision, else the host id of the fleet
        peer whose decision breakerd --fleet applied ("?" if the
        segment's peer table has since reused its slot)."""
        evs, nxt, lost = self._s.events(cursor)
        self.lost_events += lost
        return evs, nxt

    def add_listener(self, callback, names=None, kinds=None):
        """Call ``callback(event)`` for every event written from now on by
        any process on the host (and each decision breakerd --fleet
        applies), as it is written: no polling (brk_events_wait()).
        ``names``: a name or names; an event matches one equal to it or
        below it ("a" hears "a" and "a/b"); None: all. ``kinds``: event
        reasons ("threshold", "trip", "reset", "probe_failed", ...) or
        target states ("open", "closed", "half_open") to hear; None: all.
        Returns a Listener (``.remove()``). Callbacks run one at a time on
        one background thread of this Segment object (see
        breakerd._listeners for errors, slowness and fork); ``event`` is a
        dict as events() gives."""
        if self._hub is None:
            from ._listeners import Hub
            self._hub = Hub(self)
        return self._hub.add(callback, names, kinds)

    def remove_listener(self, listener):
        """Unregister a Listener add_listener() returned; True if it was."""
        return self._hub.remove(listener) if self._hub is not None else False

    def listener_stats(self):
        """The listener thread's counts: wakeups (returns from the kernel
        wait), delivered (callback calls), errors (callbacks that raised),
        lost (events overwritten before it read them), listeners,
        running."""
        if self._hub is None:
            return {"wakeups": 0, "delivered": 0, "errors": 0, "lost": 0,
                    "listeners": 0, "running": False}
        return self._hub.stats()

    def iter_events(self, cursor=0, follow=False, poll=0.1):
        """Yield events from ``cursor`` on; with follow=True wait for new
        ones (polling every ``poll`` seconds) forever."""
        while True:
            evs, cursor = self.events(cursor)
            yield from evs
            if not follow:
                return
            if not evs:
                time.sleep(poll)

    def info(self):
        """The segment header (capacity, used, daemon heartbeat ...)."""
        return self._s.info()

    def records(self):
        """Info dicts of every record (breakers, buckets, budgets)."""
        return self._s.records()

    def record_count(self):
        """Live records: published and not retired."""
        return self._s.record_count()

    def retire(self, name, *, idle=None):
        """Retire the record ``name`` so its name and storage can be used
        again; True if retired, False if kept because it is in use (a probe
        or permit held, not closed, a forced mode, or with ``idle`` (seconds
        or a duration string) activity within that long). Handles to it
        keep working: their next call re-creates it fresh. A name that
        does not exist raises LookupError."""
        ms = 0 if idle is None else to_ms(idle, "idle")
        return self._s.retire(name, ms)

    def retire_idle(self, idle):
        """One pass over every record: retire those seen unchanged for
        ``idle`` (seconds or a duration string). Returns how many; a record
        is retired only once passes have watched it that long (breakerd
        --retire-idle runs such passes continuously)."""
        return self._s.retire_idle(to_ms(idle, "idle"))


def attach(shm=None, *, capacity=None, readonly=False, clock=None):
    """Create or attach the segment: ``shm``, else $BREAKERD_SHM, else
    "/breakerd". ``clock``: a breakerd.testing.FakeClock for tests."""
    return Segment(_core.attach(shm, capacity, bool(readonly), clock), clock)
