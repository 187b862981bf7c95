"""Bucket: a host-wide GCRA rate limit."""

from ._errors import NoTokens


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
