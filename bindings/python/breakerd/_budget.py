"""Budget: a host-wide retry budget."""


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
