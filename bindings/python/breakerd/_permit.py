"""Permit: an admitted call of a Breaker."""

from . import _core
from ._outcomes import OutcomeMethods


class Permit(_core.Permit, OutcomeMethods):
    """An admitted call. Report it exactly once; every report returns True
    if the library counted it, False if not (a second report, a permit
    inherited from a fork()ed parent, a breaker reset or moved to a new
    generation since). ``counted`` is None until reported."""

    __slots__ = ()

    # success(retry_after=None): C (_core.Permit, first in the MRO) without
    # an argument, else the shared one:
    _success_slow = OutcomeMethods.success

    @property
    def breaker(self):
        return self._core_breaker.name

    def __repr__(self):
        state = ("counted" if self.counted else "not counted") if self.released else "out"
        return f"<breakerd.Permit {self.breaker} {state}>"
