"""Durations: numbers are seconds, strings go through the library's
brk_parse_duration() ("250ms", "30s", "5m", "2h"; a bare number string is
an error, as in bctl)."""

import math

from . import _core


def to_ms(value, name, *, none_ok=False):
    """``value`` (seconds or a duration string) in whole milliseconds,
    rounded up; ``name`` names the argument in errors."""
    if value is None and none_ok:
        return None
    if isinstance(value, str):
        try:
            return _core.parse_duration_ms(value)
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be seconds (int or float) or a duration "
                        f"string such as '30s', not {type(value).__name__}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number of seconds >= 0, not {value!r}")
    # round() first so that 0.1 s is 100 ms, not 101
    ms = math.ceil(round(value * 1000.0, 6))
    if ms > _core.MAX_DURATION_MS:
        raise ValueError(f"{name}: {value!r} s is longer than the largest duration")
    return int(ms)


def parse_duration(value):
    """Seconds (float) of a duration string ("250ms" -> 0.25) or number;
    ValueError on garbage, TypeError on a wrong type."""
    return to_ms(value, "duration") / 1000.0
