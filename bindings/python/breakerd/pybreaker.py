"""breakerd.pybreaker: pybreaker's public API (v1.4.1) over breakerd's
shared records. Change one import::

    import breakerd.pybreaker as pybreaker     # was: import pybreaker

and every process on the host shares each named breaker's state (the
record lives in the breakerd segment: $BREAKERD_SHM, else /breakerd; or
call ``use_segment(seg)`` first).

* A named breaker (``name=``) is the host-wide record of that name; an
  unnamed one gets a private record ("pybreaker/anon/<pid>-<n>") retired
  when the object is collected or the process exits.
* ``fail_counter`` is the record's failure streak (kept through the trip,
  +1 per failed probe); ``success_counter`` its half-open successes;
  ``current_state`` "closed", "open" or "half-open".
* pybreaker's semantics by configuration: a constant ``reset_timeout``
  (max_open = open: no exponential cooling), every BaseException not
  excluded counts as a failure (KeyboardInterrupt included), half-open
  admits up to min(success_threshold, 8) trial calls at once.
* ``CircuitRedisStorage`` maps to the host-wide record and ignores Redis
  (its keys are neither read nor written): the segment is the one source
  of truth on a host, and breakerd --fleet shares decisions between hosts.
* Listeners (``CircuitBreakerListener``) are called in the process that
  made the call; ``state_change`` also reports transitions other
  processes made, at this object's next call (from the event ring).
"""

import functools
import inspect
import itertools
import os
import re
import threading
import types
import weakref
from datetime import datetime

import breakerd
from . import _errors

try:
    from tornado import gen
    HAS_TORNADO_SUPPORT = True
except ImportError:
    HAS_TORNADO_SUPPORT = False

__all__ = (
    "CircuitBreaker", "CircuitBreakerListener", "CircuitBreakerError",
    "CircuitMemoryStorage", "CircuitRedisStorage", "STATE_OPEN", "STATE_CLOSED",
    "STATE_HALF_OPEN", "CircuitBreakerState", "use_segment",
)

STATE_OPEN = "open"
STATE_CLOSED = "closed"
STATE_HALF_OPEN = "half-open"
_FROM_CORE = {"closed": STATE_CLOSED, "open": STATE_OPEN, "half_open": STATE_HALF_OPEN}

_segment = None
_segment_lock = threading.Lock()
_anon = itertools.count(1)
_NAME_OK = re.compile(r"^[A-Za-z0-9_.:-]+(/[A-Za-z0-9_.:-]+)*$")


def use_segment(seg):
    """Use ``seg`` (a breakerd.Segment) for the breakers made from now on."""
    global _segment
    _segment = seg


def _seg():
    global _segment
    if _segment is None or _segment.closed:
        with _segment_lock:
            if _segment is None or _segment.closed:
                _segment = breakerd.attach()
    return _segment


class CircuitBreakerError(_errors.CircuitOpen):
    """The call was refused: the breaker is open (or half-open with its
    trial calls taken), or this call's failure opened it
    (throw_new_error_on_trip). A breakerd.CircuitOpen, so handlers of
    either catch it; constructible with a message."""


class CircuitBreakerState:
    """A state as pybreaker's listeners see it (``.name``)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<CircuitBreakerState {self.name}>"

    def __eq__(self, other):
        return isinstance(other, CircuitBreakerState) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


class CircuitBreakerListener:
    """Subclass and override what you need (pybreaker's interface)."""

    def before_call(self, cb, func, *args, **kwargs):
        pass

    def failure(self, cb, exc):
        pass

    def success(self, cb):
        pass

    def state_change(self, cb, old_state, new_state):
        pass


class CircuitMemoryStorage:
    """pybreaker's default storage, as initial values: the breaker starts
    in ``state`` with ``counter`` failures in its streak when it creates
    its record; after that the record holds them (``state`` and
    ``counter`` read it)."""

    name = "memory"

    def __init__(self, state):
        self._state = state
        self._fail_counter = 0
        self._success_counter = 0
        self._opened_at = None
        self._breaker = None

    def _bind(self, breaker):
        self._breaker = breaker

    @property
    def state(self):
        b = self._breaker
        return b.current_state if b is not None else self._state

    @state.setter
    def state(self, value):
        if self._breaker is not None:
            self._breaker.state = value
        else:
            self._state = value

    def increment_counter(self):
        self._fail_counter += 1

    def reset_counter(self):
        self._fail_counter = 0

    def increment_success_counter(self):
        self._success_counter += 1

    def reset_success_counter(self):
        self._success_counter = 0

    @property
    def counter(self):
        b = self._breaker
        return b.fail_counter if b is not None else self._fail_counter

    @property
    def success_counter(self):
        b = self._breaker
        return b.success_counter if b is not None else self._success_counter

    @property
    def opened_at(self):
        return self._opened_at

    @opened_at.setter
    def opened_at(self, value):
        self._opened_at = value


class CircuitRedisStorage(CircuitMemoryStorage):
    """Accepted for pybreaker compatibility; the state lives in the host's
    breakerd record, not in Redis (nothing is read from or written to
    ``redis_object``). ``namespace`` names the record
    ("pybreaker/<namespace>") when the breaker has no name, so breakers
    that shared Redis keys share a record; without either the record is
    private. Share across hosts with breakerd --fleet."""

    name = "redis"

    def __init__(self, state, redis_object, namespace=None, fallback_circuit_state="closed",
                 cluster_mode=False):
        super().__init__(state)
        self._redis = redis_object
        self._namespace_name = namespace
        self._fallback_circuit_state = fallback_circuit_state
        self._cluster_mode = cluster_mode


def _retire(seg_ref, name):
    """Retire a private record (its object was collected, or at exit):
    reset first, since retire() keeps an open record."""
    seg = seg_ref()
    if seg is None or seg.closed:
        return
    try:
        seg.breaker(name).reset()
        seg.retire(name)
    except Exception:
        pass


class CircuitBreaker:
    """pybreaker.CircuitBreaker over a breakerd record."""

    def __init__(self, fail_max=5, reset_timeout=60, success_threshold=1, exclude=None,
                 listeners=None, state_storage=None, name=None,
                 throw_new_error_on_trip=True):
        self._lock = threading.RLock()
        self._notify_lock = threading.Lock()
        self._excluded_exceptions = list(exclude or [])
        self._listeners = list(listeners or [])
        self._state_storage = state_storage or CircuitMemoryStorage(STATE_CLOSED)
        self._throw_new_error_on_trip = throw_new_error_on_trip
        self._fail_max = fail_max
        self._reset_timeout = reset_timeout
        self._success_threshold = success_threshold
        self._name = name
        self._finalizer = None
        self._seg = _seg()
        self._bind(self._record_name(name), initial=True)
        self._state_storage._bind(self)

    # ---- the record ------------------------------------------------------
    def _record_name(self, name):
        if name is None:
            ns = getattr(self._state_storage, "_namespace_name", None)
            if ns:
                name = f"pybreaker/{ns}"
            else:
                return None
        name = str(name)
        return name if _NAME_OK.match(name) and len(name) <= 63 else \
            "pybreaker/" + re.sub(r"[^A-Za-z0-9_.:-]", "_", name)[:50]

    def _settings(self):
        ms = max(1, round(float(self._reset_timeout) * 1000))
        return {"failure_threshold": int(self._fail_max), "open": f"{ms}ms",
                "max_open": f"{ms}ms", "success_threshold": int(self._success_threshold),
                "half_open_probes": max(1, min(8, int(self._success_threshold)))}

    def _bind(self, record_name, initial=False):
        private = record_name is None
        if private:
            record_name = f"pybreaker/anon/{os.getpid()}-{next(_anon)}"
        settings = self._settings()
        br = self._seg.breaker(record_name, failure=(BaseException,), **settings)
        if not br.created:
            cfg = br.info()["config"]
            if (cfg["failure_threshold"] != settings["failure_threshold"]
                    or cfg["success_threshold"] != settings["success_threshold"]
                    or cfg["open_ms"] != int(settings["open"][:-2])
                    or cfg["max_open_ms"] != int(settings["max_open"][:-2])):
                br.configure(**settings)  # the last process's settings win
        self._br = br
        self._cursor = self._seg.info()["events_written"] + 1
        if self._finalizer is not None:
            self._finalizer()  # the previous private record
            self._finalizer = None
        if private:
            self._finalizer = weakref.finalize(self, _retire, weakref.ref(self._seg),
                                               record_name)
            self._finalizer.atexit = True
        if initial and br.created:
            self._seed(self._state_storage)

    def _seed(self, storage):
        """A new record starts as the storage says (pybreaker keeps its
        state in the storage object)."""
        n = min(getattr(storage, "_fail_counter", 0), max(0, self._fail_max - 1))
        for _ in range(n):
            p = self._br.acquire()
            p.failure()
        st = getattr(storage, "_state", STATE_CLOSED)
        if st == STATE_OPEN:
            self._br.trip(for_=self._settings()["open"], restart=True)
        elif st == STATE_HALF_OPEN:
            self._br.half_open()
        elif st != STATE_CLOSED:
            raise ValueError(f"Unknown state {st!r}")
        self._cursor = self._seg.info()["events_written"] + 1

    # ---- pybreaker's properties ------------------------------------------
    @property
    def fail_counter(self):
        return self._br.failure_streak

    @property
    def success_counter(self):
        return self._br.half_open_successes

    @property
    def current_state(self):
        return _FROM_CORE[self._br.state]

    @property
    def state(self):
        return CircuitBreakerState(self.current_state)

    @state.setter
    def state(self, state_str):
        with self._lock:
            if state_str == STATE_OPEN:
                self.open()
            elif state_str == STATE_CLOSED:
                self.close()
            elif state_str == STATE_HALF_OPEN:
                self.half_open()
            else:
                raise ValueError(f"Unknown state {state_str!r}")

    def _create_new_state(self, new_state, prev_state=None, notify=False):
        if new_state not in (STATE_OPEN, STATE_CLOSED, STATE_HALF_OPEN):
            raise ValueError(f"Unknown state {new_state!r}, valid states: "
                             f"{STATE_OPEN}, {STATE_CLOSED}, {STATE_HALF_OPEN}")
        return CircuitBreakerState(new_state)

    @property
    def fail_max(self):
        return self._fail_max

    @fail_max.setter
    def fail_max(self, number):
        self._fail_max = number
        self._br.configure(failure_threshold=int(number))

    @property
    def reset_timeout(self):
        return self._reset_timeout

    @reset_timeout.setter
    def reset_timeout(self, timeout):
        self._reset_timeout = timeout
        s = self._settings()
        self._br.configure(open=s["open"], max_open=s["max_open"])

    @property
    def success_threshold(self):
        return self._success_threshold

    @success_threshold.setter
    def success_threshold(self, threshold):
        self._success_threshold = threshold
        s = self._settings()
        self._br.configure(success_threshold=s["success_threshold"],
                           half_open_probes=s["half_open_probes"])

    @property
    def name(self):
        return self._name

    @name.setter
    def name(self, name):
        """Renaming moves this object to the record of the new name."""
        with self._lock:
            self._name = name
            self._bind(self._record_name(name))

    @property
    def excluded_exceptions(self):
        return tuple(self._excluded_exceptions)

    def add_excluded_exception(self, exception):
        with self._lock:
            self._excluded_exceptions.append(exception)

    def add_excluded_exceptions(self, *exceptions):
        for exc in exceptions:
            self.add_excluded_exception(exc)

    def remove_excluded_exception(self, exception):
        with self._lock:
            self._excluded_exceptions.remove(exception)

    def is_system_error(self, exception):
        """True if ``exception`` counts as a failure (not excluded)."""
        for data in self._excluded_exceptions:
            if isinstance(data, type):
                if isinstance(exception, data):
                    return False
            elif callable(data) and data(exception):
                return False
        return True

    @property
    def listeners(self):
        return tuple(self._listeners)

    def add_listener(self, listener):
        with self._lock:
            self._listeners.append(listener)

    def add_listeners(self, *listeners):
        for listener in listeners:
            self.add_listener(listener)

    def remove_listener(self, listener):
        with self._lock:
            self._listeners.remove(listener)

    # ---- steering ---------------------------------------------------------
    def open(self):
        """Open (again) for reset_timeout from now, in every process."""
        with self._lock:
            self._br.trip(for_=self._settings()["open"], restart=True)
            self._state_storage.opened_at = datetime.utcnow()
        self._notify_transitions()

    def half_open(self):
        with self._lock:
            self._br.half_open()
        self._notify_transitions()

    def close(self):
        with self._lock:
            self._br.reset()
        self._notify_transitions()

    # ---- transitions heard from the event ring ----------------------------
    def _notify_transitions(self):
        """Tell state_change listeners about the transitions of this record
        written since the last look (by this process or another), once each."""
        if not self._listeners:
            return
        with self._notify_lock:
            evs, self._cursor = self._seg.events(self._cursor)
            name = self._br.name
            changes = [e for e in evs if e["name"] == name and e["from"] != e["to"]
                       and e["from"] in _FROM_CORE and e["to"] in _FROM_CORE]
            for e in changes:
                old = CircuitBreakerState(_FROM_CORE[e["from"]])
                new = CircuitBreakerState(_FROM_CORE[e["to"]])
                for listener in self._listeners:
                    listener.state_change(self, old, new)

    # ---- calls -------------------------------------------------------------
    def _before(self, func, args, kwargs):
        for listener in self._listeners:
            listener.before_call(self, func, *args, **kwargs)
        try:
            return self._br.acquire()
        except breakerd.Refused as r:
            self._notify_transitions()
            raise CircuitBreakerError(r.wait, r.cause, r.breaker,
                                      "Timeout not elapsed yet, circuit breaker still open"
                                      if r.cause == "open" else str(r)) from None

    def _gen_before(self):
        c = self._br.counts()
        return c["state"], c["generation"]

    def _handle_error(self, permit, exc, before, reraise=True):
        """Report a call left by ``exc``; raise CircuitBreakerError if it
        opened the breaker and throw_new_error_on_trip."""
        if not self.is_system_error(exc):
            permit.success()
            with self._notify_lock:
                for listener in self._listeners:
                    listener.success(self)
            self._notify_transitions()
            return
        permit.failure()
        with self._notify_lock:
            for listener in self._listeners:
                listener.failure(self, exc)
        self._notify_transitions()
        after = self._br.counts()
        tripped = after["state"] == "open" and after["generation"] != before[1] \
            and before[0] != "open"
        if tripped and self._throw_new_error_on_trip:
            raise CircuitBreakerError(0.0, "open", self._br.name,
                                      "Failures threshold reached, circuit breaker opened")

    def _handle_success(self, permit):
        permit.success()
        with self._notify_lock:
            for listener in self._listeners:
                listener.success(self)
        self._notify_transitions()

    def call(self, func, *args, **kwargs):
        """Call ``func`` under the breaker: CircuitBreakerError if refused;
        a generator's iteration is guarded to its end."""
        permit = self._before(func, args, kwargs)
        before = self._gen_before_from(permit)
        try:
            ret = func(*args, **kwargs)
            if isinstance(ret, types.GeneratorType):
                return self._generator_call(ret, permit, before)
        except BaseException as e:
            self._handle_error(permit, e, before)
            raise
        self._handle_success(permit)
        return ret

    def _gen_before_from(self, permit):
        # the state the permit was admitted under (read right after)
        self._notify_transitions()
        return self._gen_before()

    def _generator_call(self, wrapped, permit, before):
        # yield from: values sent and exceptions thrown in (contextmanager)
        # reach the wrapped generator
        try:
            ret = yield from wrapped
        except GeneratorExit:
            permit.cancel()  # closed unfinished
            raise
        except BaseException as e:
            self._handle_error(permit, e, before)
            raise
        self._handle_success(permit)
        return ret

    def call_async(self, func, *args, **kwargs):
        """Tornado: call ``func`` (returning a Future) under the breaker."""
        if not HAS_TORNADO_SUPPORT:
            raise ImportError("No module named tornado")
        permit = self._before(func, args, kwargs)
        before = self._gen_before_from(permit)

        @gen.coroutine
        def wrapped():
            try:
                ret = yield func(*args, **kwargs)
            except BaseException as e:
                self._handle_error(permit, e, before)
                raise
            self._handle_success(permit)
            raise gen.Return(ret)
        return wrapped()

    async def call_coroutine(self, func, *args, **kwargs):
        """asyncio: await ``func(*args, **kwargs)`` under the breaker."""
        permit = self._before(func, args, kwargs)
        before = self._gen_before_from(permit)
        try:
            ret = await func(*args, **kwargs)
        except BaseException as e:
            self._handle_error(permit, e, before)
            raise
        self._handle_success(permit)
        return ret

    def calling(self):
        """A context manager: ``with breaker.calling(): ...``."""
        return _Calling(self)

    def __call__(self, *call_args, **call_kwargs):
        """The decorator: ``@breaker`` or ``@breaker(__pybreaker_call_async=True)``
        (Tornado); coroutine functions are awaited under the breaker."""
        call_async = call_kwargs.pop("__pybreaker_call_async", False)
        if call_async and not HAS_TORNADO_SUPPORT:
            raise ImportError("No module named tornado")

        def _outer_wrapper(func):
            if inspect.iscoroutinefunction(func) and not call_async:
                @functools.wraps(func)
                async def _async_wrapper(*args, **kwargs):
                    return await self.call_coroutine(func, *args, **kwargs)
                return _async_wrapper

            @functools.wraps(func)
            def _inner_wrapper(*args, **kwargs):
                if call_async:
                    return self.call_async(func, *args, **kwargs)
                return self.call(func, *args, **kwargs)
            return _inner_wrapper

        if call_args:
            return _outer_wrapper(*call_args)
        return _outer_wrapper

    def __repr__(self):
        return f"<breakerd.pybreaker.CircuitBreaker {self._br.name} {self.current_state}>"


class _Calling:
    __slots__ = ("_cb", "_permit", "_before")

    def __init__(self, cb):
        self._cb = cb

    def __enter__(self):
        cb = self._cb
        self._permit = cb._before(None, (), {})
        self._before = cb._gen_before_from(self._permit)
        return cb

    def __exit__(self, et, ev, tb):
        if et is None:
            self._cb._handle_success(self._permit)
            return False
        self._cb._handle_error(self._permit, ev, self._before)
        return False

