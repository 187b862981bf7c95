"""Segment, Breaker, Permit, Bucket and Budget: the Python face of
breakerd._core."""

import functools
import inspect
import time

from . import _core
from ._classify import (OUTCOMES, REASONS, Matcher, classify_http_ms, header,
                        outcome_of)
from ._durations import to_ms
from ._errors import NoTokens
from . import _settings


def _active():
    """[(breaker, permit), ...]: the open `with br:` blocks of this context
    (thread or asyncio task), innermost last. Per context, not on the
    shared Breaker object, so threads and tasks never see each other's."""
    return _core._held()


_SUCCESS = _core.SUCCESS


def _retry_ms(retry_after):
    ms = to_ms(retry_after, "retry_after", none_ok=True)
    return ms or 0


class Permit(_core.Permit):
    """An admitted call. Report it exactly once; every report returns True
    if the library counted it, False if not (a second report, a permit
    inherited from a fork()ed parent, a breaker reset or moved to a new
    generation since). ``counted`` is None until reported."""

    __slots__ = ()

    def _report(self, outcome, reason="none", retry_after=None):
        ms = 0 if retry_after is None else _retry_ms(retry_after)
        return self._release(OUTCOMES[outcome], REASONS[reason], ms)

    # success(retry_after=None): C (_core.Permit) without an argument, else:
    def _success_slow(self, retry_after=None):
        if retry_after is None:
            return self._release(_SUCCESS, 0, 0)
        return self._report("success", "none", retry_after)

    def failure(self, reason="server_error", retry_after=None):
        if reason not in REASONS:
            raise ValueError(f"reason must be one of {', '.join(REASONS)}, not {reason!r}")
        return self._report("failure", reason, retry_after)

    def healthy_error(self, retry_after=None):
        return self._report("healthy_error", "none", retry_after)

    def rejected(self, retry_after=None):
        return self._report("rejected_request", "none", retry_after)

    def cancel(self):
        return self._report("cancelled")

    def report_http(self, status, headers=None, body=None):
        """Classify an HTTP response (status, Retry-After from ``headers``,
        ``body`` text) and report it."""
        outcome, reason, ms = classify_http_ms(status, header(headers, "Retry-After"), body)
        if outcome is None:
            raise ValueError(f"status {status!r} and the body give no verdict: "
                             "report the permit yourself")
        return self._release(OUTCOMES[outcome], REASONS[reason], ms)

    @property
    def breaker(self):
        return self._core_breaker.name

    def __repr__(self):
        state = ("counted" if self.counted else "not counted") if self.released else "out"
        return f"<breakerd.Permit {self.breaker} {state}>"


class Breaker(_core.Guard):
    """A host-wide circuit breaker. ``with br:``, ``async with br:``,
    ``@br`` and ``br.call(fn)`` run a call under a permit and report it on
    every path; ``br.acquire()`` gives the explicit permit.

    ``__enter__``/``__exit__`` and ``call`` are C (_core.Guard, see
    src/py_guard.c and src/py_held.c): a `with` block's permit is kept on a stack
    of the running context (each thread, each asyncio task), never on this
    shared object; only a block left by an exception comes back to Python
    (``_exit_error``) to be classified."""

    __slots__ = ("_segment", "_failure", "_exclude", "_ignore", "__weakref__")

    def __init__(self, core, segment, failure, exclude, ignore):
        _core.Guard.__init__(self, core, Permit)
        self._segment = segment
        self._failure = failure
        self._exclude = exclude
        self._ignore = ignore

    @property
    def name(self):
        return self._b.name

    @property
    def state(self):
        return self._b.state

    @property
    def segment(self):
        return self._segment

    def __repr__(self):
        return f"<breakerd.Breaker {self.name} {self.state}>"

    # ---- permits ----
    # acquire() -> Permit, or raise a Refused subclass: _core.Guard (C)

    def _exit_error(self, permit, exc):
        """Report ``permit`` of a block (or call) left by ``exc`` (called by
        the C __exit__ and call())."""
        if permit.released:
            return
        try:
            outcome, reason = outcome_of(exc, self._failure, self._exclude, self._ignore)
        except BaseException:
            permit.cancel()  # a classifier callable raised: still exactly once
            raise
        permit._report(outcome, reason)

    # __enter__, __exit__: _core.Guard (C)

    async def __aenter__(self):
        return self._aenter()

    async def __aexit__(self, et, ev, tb):
        return self._aexit(et, ev, tb)

    def __call__(self, fn):
        """Decorate a function or a coroutine function."""
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            # the call would only create the generator: the permit would be
            # reported before the generator ran
            raise TypeError(f"@{self.name} cannot guard a generator function "
                            f"({fn.__name__}): use `with br:` inside it")
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def guarded_async(*args, **kwargs):
                async with self:
                    return await fn(*args, **kwargs)
            return guarded_async
        if not callable(fn):
            raise TypeError(f"@{self.name} decorates a callable, not {type(fn).__name__}")
        call = self.call  # C: no `with` and no stack for the permit

        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            return call(fn, *args, **kwargs)
        return guarded

    # call(fn, *args, **kwargs): _core.Guard (C) for plain functions and
    # builtins; everything else comes here.
    def _call_slow(self, fn, *args, **kwargs):
        if inspect.iscoroutinefunction(fn):
            return self(fn)(*args, **kwargs)  # the coroutine to await
        self(fn)  # the checks of the decorator (generator functions ...)
        with self:
            return fn(*args, **kwargs)

    # ---- inspection and steering ----
    def info(self):
        """A snapshot: the fields of `bctl inspect --json`."""
        return self._b.info()

    def reset(self):
        self._b.reset()

    def trip(self, for_="60s"):
        """Force open for ``for_``; False if it was already open."""
        ms = to_ms(for_, "for_")
        if ms == 0:
            raise ValueError("for_ must be at least 1 ms")
        return self._b.trip(ms)

    def force_open(self):
        return self._b.set_mode(_core.MODE_FORCED_OPEN)

    def disable(self):
        return self._b.set_mode(_core.MODE_DISABLED)

    def metrics_only(self):
        return self._b.set_mode(_core.MODE_METRICS_ONLY)

    def normal(self):
        """Back to normal mode (without resetting the state machine)."""
        return self._b.set_mode(_core.MODE_NORMAL)

    def configure(self, **settings):
        """Change the settings of the existing record (state and counters
        are kept)."""
        cfg = _settings.to_config(settings)
        full = dict(self._b.info()["config"])
        full.update(cfg)
        _settings.check(full, settings)
        self._b.configure(cfg)


class Bucket:
    """A host-wide GCRA rate limit."""

    __slots__ = ("_k", "_segment")

    def __init__(self, core, segment):
        self._k = core
        self._segment = segment

    @property
    def name(self):
        return self._k.name

    def take(self, n=1):
        """Take n tokens, or raise NoTokens(wait=seconds)."""
        wait = self._k._take(n)
        if wait:
            raise NoTokens(wait=wait, cause="no_tokens", breaker=self.name)

    def try_take(self, n=1):
        """0.0 if taken, else the seconds to wait (jittered)."""
        return self._k._take(n)

    def info(self):
        return self._k.info()

    def configure(self, *, rate, burst):
        self._k.configure(rate, burst)

    def __repr__(self):
        return f"<breakerd.Bucket {self.name}>"


class Budget:
    """A host-wide retry budget (Finagle's)."""

    __slots__ = ("_g", "_segment")

    def __init__(self, core, segment):
        self._g = core
        self._segment = segment

    @property
    def name(self):
        return self._g.name

    def deposit(self):
        """Record one first attempt."""
        self._g.deposit()

    def retry(self):
        """Take one retry, or raise RetryDeferred (``wait``: when the floor
        next holds a token, an estimate; 0.0 if there is no floor)."""
        self._g.retry()

    def info(self):
        return self._g.info()

    def configure(self, *, floor, ratio):
        self._g.configure(floor, ratio)

    def __repr__(self):
        return f"<breakerd.Budget {self.name}>"


PRIORITIES = {"normal": _core.PRIORITY_NORMAL, "high": _core.PRIORITY_HIGH}


def _priority(priority):
    if not isinstance(priority, str):
        raise TypeError(f"priority must be 'normal' or 'high', not {type(priority).__name__}")
    if priority not in PRIORITIES:
        raise ValueError(f"priority must be 'normal' or 'high', not {priority!r}")
    return PRIORITIES[priority]


def _pace_signal(status, outcome, reason, retry_after, headers):
    """(signal, retry_after_ms) of an answer given as an HTTP ``status``
    (with ``headers``' Retry-After) or as an ``outcome`` and ``reason``
    name (see Permit); ``retry_after`` (seconds or a duration string)
    overrides the header."""
    if (status is None) == (outcome is None):
        raise TypeError("give exactly one of status= (an HTTP status) or outcome=")
    ms = None if retry_after is None else _retry_ms(retry_after)
    if status is not None:
        o, r, hms = classify_http_ms(status, header(headers, "Retry-After"))
        if o is None:
            return _core.PACE_IGNORE, 0  # no verdict: no signal
        ms = hms if ms is None else ms
    else:
        if headers is not None:
            raise TypeError("headers= goes with status=, not outcome=")
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}, not {outcome!r}")
        if reason not in REASONS:
            raise ValueError(f"reason must be one of {', '.join(REASONS)}, not {reason!r}")
        o, r = outcome, reason
    ms = ms or 0
    return _core.pace_signal_of(OUTCOMES[o], REASONS[r], ms), ms


class PaceToken:
    """One request's slot at a pace's rate (Pace.take()). Report how the
    upstream answered, once: ``report(status=429, headers=...)`` or
    ``report(outcome="failure", reason="rate_limited", retry_after=1)``.
    As a context manager it reports for you if you did not: a clean exit
    is a success (``ok``), an exception no signal (a connection error says
    nothing about the upstream's rate limit)."""

    __slots__ = ("pace", "taken_at", "waited", "reported", "cut")

    def __init__(self, pace, taken_at, waited):
        self.pace = pace
        self.taken_at = taken_at  # ns, segment clock (Segment.now_ns())
        self.waited = waited      # seconds slept for it
        self.reported = False
        self.cut = None           # after report(): True if it cut the rate

    def report(self, status=None, *, outcome=None, reason="none", retry_after=None,
               headers=None):
        """Report the answer; True if it cut the shared rate. A second
        report is refused (RuntimeError): each answer counts once."""
        if self.reported:
            raise RuntimeError(f"{self.pace.name}: this token was already reported")
        self.cut = self.pace.report(self.taken_at, status, outcome=outcome, reason=reason,
                                    retry_after=retry_after, headers=headers)
        self.reported = True
        return self.cut

    def __enter__(self):
        return self

    def __exit__(self, et, ev, tb):
        if not self.reported:
            self.reported = True
            self.cut = self.pace._k._report(self.taken_at,
                                            _core.PACE_OK if et is None else _core.PACE_IGNORE, 0)
        return False

    def __repr__(self):
        return f"<breakerd.PaceToken {self.pace.name} at {self.taken_at}>"


class Pace:
    """A host-wide learned rate (a GCRA bucket in paced mode): it starts at
    ``ceiling``, each rate-limit answer reported to it (a 429, or a 503/529
    with a Retry-After) cuts the rate for every process at once (one cut per
    round trip), and it grows back along the CUBIC curve (RFC 8312) towards
    the ceiling. ``reserve_pct`` of the rate is kept for high priority.
    ``fleet=True``: breakerd --fleet shares its cuts with the other hosts."""

    __slots__ = ("_k", "_segment")

    def __init__(self, core, segment):
        self._k = core
        self._segment = segment

    @property
    def name(self):
        return self._k.name

    def take(self, priority="normal", wait=0):
        """A PaceToken, sleeping up to ``wait`` (seconds or a duration
        string; 0: never sleeps) in total for a slot, at the jittered wake
        times the library gives; else raise NoTokens (``wait``: when to
        try again). On a segment with a FakeClock it never sleeps: a take
        that would have to wait raises NoTokens at once (tests move the
        clock)."""
        prio = _priority(priority)
        budget = to_ms(wait, "wait") / 1000.0
        waited = 0.0
        while True:
            at, w = self._k._take(prio)
            if w == 0.0:
                return PaceToken(self, at, waited)
            if waited + w > budget or self._segment._clock is not None:
                raise NoTokens(wait=w, cause="no_tokens", breaker=self.name)
            time.sleep(w)
            waited += w

    def try_take(self, priority="normal"):
        """(token, 0.0) if taken, else (None, seconds to wait, jittered)."""
        at, w = self._k._take(_priority(priority))
        return (PaceToken(self, at, 0.0), 0.0) if w == 0.0 else (None, w)

    def report(self, taken_at, status=None, *, outcome=None, reason="none",
               retry_after=None, headers=None):
        """Tell the pace how the request taken at ``taken_at`` (ns, a
        token's ``taken_at``) was answered: an HTTP ``status`` (its
        Retry-After from ``headers``) or an ``outcome`` name with a
        ``reason``, as Permit.report_http / Permit.failure take them. A
        429, or a 503/529 with a Retry-After, cuts the rate if the request
        was taken at the current rate; a success feeds the accepted-rate
        estimate; anything else is ignored. Returns True if this report cut
        the rate."""
        if isinstance(taken_at, bool) or not isinstance(taken_at, int):
            raise TypeError(f"taken_at must be an int (ns), not {type(taken_at).__name__}")
        sig, ms = _pace_signal(status, outcome, reason, retry_after, headers)
        return self._k._report(taken_at, sig, ms)

    def info(self):
        """The fields of `bctl inspect --json` (with "paced" and "pace")."""
        return self._k.info()

    def update(self, *, ceiling=None, floor=None, burst=None, reserve_pct=None,
               fleet=None):
        """Change only the settings given; the learned state is kept."""
        self._k.update(ceiling, floor, burst, reserve_pct, fleet)

    def __repr__(self):
        return f"<breakerd.Pace {self.name}>"


ATTEMPTS = {"first": _core.FIRST_ATTEMPT, "retry": _core.RETRY}
_ANY = Matcher((Exception,), "failure")
_NONE = Matcher((), "exclude")


class Admission:
    """A job let through by Segment.admit(): the breaker's permit (if a
    breaker was given) and the pace's slot (if a pace was given). Release
    it exactly once with how the call ended -- success(), failure(reason),
    healthy_error(), rejected(), cancel(), report_http(status, headers) --
    or use it as a context manager, which releases it on every path: a
    clean exit is a success, an exception is classified as in ``with br:``
    (the breaker's failure/exclude/ignore). A rate-limit answer (429, or a
    503/529 with a Retry-After) of a paced admission cuts the pace's rate
    and counts neither way for the breaker (outcome "throttled"). Every
    release returns True if it was reported, False if not (a second
    release, a fork()ed child's copy, a stale permit).
    ``outcome_code``: after the release, the stable code of the answer
    ("OK", "UPSTREAM_TIMEOUT", ..., as brk_outcome_code(); "THROTTLED"
    for a rate-limit answer of a paced admission); ``code`` is "GO"; ``waited``: seconds admit()
    slept; ``taken_at``: the pace slot's time (ns, 0 without a pace)."""

    __slots__ = ("_a", "breaker", "pace", "budget", "_answer")

    def __init__(self, core, breaker, pace, budget):
        self._a = core
        self.breaker = breaker
        self.pace = pace
        self.budget = budget
        self._answer = None  # (outcome, reason) of the release

    @property
    def outcome_code(self):
        a = self._answer
        if a is None:
            return None
        # the recorded outcome: a paced rate-limit answer is "THROTTLED"
        return _core.outcome_code(self._a.recorded_outcome or a[0], a[1])

    code = property(lambda self: self._a.code)
    waited = property(lambda self: self._a.waited)
    taken_at = property(lambda self: self._a.taken_at)
    released = property(lambda self: self._a.released)

    def report(self, outcome, reason="none", retry_after=None):
        """Release with an outcome name (success, failure, healthy_error,
        rejected_request, cancelled, throttled) and a failure reason."""
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}, not {outcome!r}")
        if reason not in REASONS:
            raise ValueError(f"reason must be one of {', '.join(REASONS)}, not {reason!r}")
        ms = 0 if retry_after is None else _retry_ms(retry_after)
        return self._release(OUTCOMES[outcome], REASONS[reason], ms)

    def _release(self, o, r, ms):
        if self._answer is None and not self._a.released:
            self._answer = (o, r)
        return self._a._release(o, r, ms)

    def success(self, retry_after=None):
        if retry_after is None:
            return self._release(_SUCCESS, 0, 0)
        return self.report("success", "none", retry_after)

    def failure(self, reason="server_error", retry_after=None):
        return self.report("failure", reason, retry_after)

    def healthy_error(self, retry_after=None):
        return self.report("healthy_error", "none", retry_after)

    def rejected(self, retry_after=None):
        return self.report("rejected_request", "none", retry_after)

    def cancel(self):
        return self.report("cancelled")

    def report_http(self, status, headers=None, body=None):
        """Classify an HTTP response (status, Retry-After from ``headers``,
        ``body`` text) as Permit.report_http does, and release with it."""
        outcome, reason, ms = classify_http_ms(status, header(headers, "Retry-After"), body)
        if outcome is None:
            raise ValueError(f"status {status!r} and the body give no verdict: "
                             "report the admission yourself")
        return self._release(OUTCOMES[outcome], REASONS[reason], ms)

    def __enter__(self):
        return self

    def __exit__(self, et, ev, tb):
        if self._a.released:
            return False
        if et is None:
            self._release(_SUCCESS, 0, 0)
            return False
        br = self.breaker
        try:
            outcome, reason = outcome_of(ev, br._failure if br else _ANY,
                                         br._exclude if br else _NONE,
                                         br._ignore if br else _NONE)
        except BaseException:
            self.cancel()  # a classifier callable raised: still exactly once
            raise
        self.report(outcome, reason)
        return False

    def __repr__(self):
        state = f"released {self.outcome_code}" if self.released else "out"
        return f"<breakerd.Admission {self.code} {state}>"


class Segment:
    """An attached segment; a context manager that closes it."""

    __slots__ = ("_s", "_clock", "lost_events", "__weakref__")

    def __init__(self, core, clock=None):
        self._s = core
        self._clock = clock  # a FakeClock: nothing sleeps on it
        self.lost_events = 0

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
        self._s.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return f"<breakerd.Segment {self.shm}{' closed' if self.closed else ''}>"

    def breaker(self, name, *, failure=(Exception,), exclude=(), ignore=(), **settings):
        """Get or create the breaker ``name``; ``settings`` apply only if
        this call creates the record (see Breaker.configure)."""
        f = Matcher(failure, "failure")
        e = Matcher(exclude, "exclude")
        i = Matcher(ignore, "ignore")
        cfg = _settings.to_config(settings)
        full = _core.config_defaults()
        full.update(cfg)
        _settings.check(full, settings)
        return Breaker(self._s.breaker(name, cfg), self, f, e, i)

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
        docs/design.md "Admission"): (1) EXPIRED if the wait it faces now
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
        prio = _priority(priority)
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
