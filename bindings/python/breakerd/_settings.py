"""Breaker settings: the Python keyword names and their brk_config fields."""

from . import _core
from ._durations import to_ms

# python name -> (brk_config field, kind)
SETTINGS = {
    "failure_threshold": ("failure_threshold", "count"),
    "open": ("open_ms", "duration"),
    "max_open": ("max_open_ms", "duration"),
    "half_open_probes": ("half_open_probes", "count"),
    "success_threshold": ("success_threshold", "count"),
    "probe_timeout": ("probe_timeout_ms", "duration"),
    "max_wait": ("max_wait_ms", "duration"),
    # N (0: no bulkhead), "auto" (a limit learned from latency by every
    # process of the host, up to MAX_CONCURRENT) or "auto:N" (up to N)
    "max_concurrent": ("max_concurrent", "concurrent"),
    "min_concurrent": ("min_concurrent", "count"),  # floor of a learned limit
    "failure_rate": ("failure_rate_pct", "pct"),
    "window": ("window_ms", "duration"),
    "min_calls": ("min_calls", "count"),
    "slow_call": ("slow_call_ms", "duration_or_none"),
    "slow_rate": ("slow_rate_pct", "pct"),
    "min_distinct_processes": ("min_distinct_processes", "count"),
    "reserve_pct": ("reserve_pct", "count"),  # bulkhead share for priority="high"
    "hold_histogram": ("hold_histogram", "bool"),  # permit hold-time histogram
    "fleet": ("fleet", "bool"),  # breakerd --fleet shares its decisions
    "fleet_probe": ("fleet_probe", "bool"),  # one probe for the whole fleet
    # a 429 gives the breaker a learned pace NAME:pace (issue 21); off:
    # rate-limit answers stay failures
    "implicit_pace": ("implicit_pace", "bool"),
}
_BY_FIELD = {field: py for py, (field, _) in SETTINGS.items()}


def _count(name, v):
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{name} must be an int, not {type(v).__name__}")
    if v < 0:
        raise ValueError(f"{name} must not be negative, not {v}")
    return v


def _concurrent(name, v):
    """max_concurrent: (max_concurrent, concurrency_auto) of N, "auto",
    "auto:N"."""
    if isinstance(v, str):
        if v == "auto":
            return 0, 1
        n = v[5:]
        # ASCII digits only (str.isdigit() is true for "²" and "٣"), and
        # a bound of 1 or more: "auto:0" is not "auto" (bctl, the
        # breakers file and brk_config say the same)
        if v.startswith("auto:") and n.isascii() and n.isdigit() and int(n) >= 1:
            return int(n), 1
        raise ValueError(f"{name} must be a count, 'auto' or 'auto:N' "
                         f"(N 1..{_core.MAX_CONCURRENT}), not {v!r}")
    return _count(name, v), 0


def _pct(name, v):
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{name} must be a percentage (1..100) or None, not {type(v).__name__}")
    if not 1 <= v <= 100:
        raise ValueError(f"{name} must be a percentage 1..100 (50 = half) or None, not {v!r}")
    return round(v)


def to_config(settings):
    """Validate ``settings`` (Python names) and return a dict of brk_config
    fields; raises TypeError / ValueError naming the setting."""
    out = {}
    for name, value in settings.items():
        try:
            field, kind = SETTINGS[name]
        except KeyError:
            raise TypeError(f"unknown setting {name!r} (known: {', '.join(SETTINGS)})") from None
        if kind == "count":
            out[field] = _count(name, value)
        elif kind == "concurrent":
            out[field], out["concurrency_auto"] = _concurrent(name, value)
        elif kind == "bool":
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be True or False, not {type(value).__name__}")
            out[field] = int(value)
        elif kind == "pct":
            out[field] = _pct(name, value)
        elif kind == "duration":
            if value is None:
                raise TypeError(f"{name} must be a duration, not None")
            out[field] = to_ms(value, name)
        else:  # duration_or_none
            out[field] = to_ms(value, name, none_ok=True) or 0
    return out


def check(config, given):
    """Raise ValueError naming the first bad setting of a full config."""
    bad = _core.config_check(config)
    if bad is not None:
        py = _BY_FIELD.get(bad, bad)
        shown = f"{py}={given[py]!r}" if py in given else py
        rule = _RULES.get(bad)
        rule = rule() if rule else "out of range"
        raise ValueError(f"bad setting {shown}: {rule} (given: {given!r})")


# What each setting must be, in the words of brk_config_validate(); the
# bounds are the library's constants (breaker.h), not copies.
_RULES = {
    "failure_threshold": lambda: f"must be 1..{_core.MAX_FAILURE_THRESHOLD}",
    "success_threshold": lambda: f"must be 1..{_core.MAX_SUCCESS_THRESHOLD}",
    "half_open_probes": lambda: f"must be 1..{_core.MAX_PROBES}",
    "max_concurrent": lambda: f"must be 0 (no bulkhead) ..{_core.MAX_CONCURRENT}, 'auto' or 'auto:N'",
    "min_concurrent": lambda: "must be 1..max_concurrent (the bound of 'auto:N', or "
    f"{_core.MAX_CONCURRENT} for 'auto') with max_concurrent='auto'",
    "concurrency_auto": lambda: "must be 0 or 1",
    "min_calls": lambda: f"must be 0..{_core.MAX_MIN_CALLS}",
    "min_distinct_processes": lambda: f"must be 0 or 1 (off), or 2..{_core.MAX_QUORUM}",
    "reserve_pct": lambda: f"must be 0..{_core.MAX_RESERVE_PCT} (share kept for high priority)",
    "max_open_ms": lambda: "must be at least open (the first cooling period)",
    "slow_rate_pct": lambda: "must be 1..100 when slow_call is set (both, or neither)",
    "slow_call_ms": lambda: "must be set together with slow_rate",
    "failure_rate_pct": lambda: "must be 1..100, or None (off)",
}
