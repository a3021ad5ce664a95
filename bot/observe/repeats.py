"""A background loop's failures in the log: the first of a kind with its traceback, the same
failure again only counted, and one line when the loop works again. A loop that fails the
same way every second (a bug, or a client that cannot recover) would otherwise print a
traceback every second for as long as it runs."""

from __future__ import annotations

import logging


class RepeatedFailure:
    """The failures of one loop (`what` names it in the log)."""

    def __init__(self, logger: logging.Logger, what: str) -> None:
        self.log = logger
        self.what = what
        self._kind: str | None = None  # the failure last logged, while it goes on
        self._count = 0

    def failed(self, exc: BaseException) -> None:
        """One more failure: logged with its traceback if it is not the one going on."""
        said = str(exc).splitlines()[0] if str(exc) else ""
        kind = f"{type(exc).__name__}: {said}" if said else type(exc).__name__
        if kind == self._kind:
            self._count += 1
            return
        self._kind, self._count = kind, 1
        self.log.error("%s failed; retrying (the same failure again is counted, not logged)",
                       self.what, exc_info=exc)

    def ok(self) -> None:
        """A turn went through: one line if it had been failing."""
        if self._kind is None:
            return
        self.log.warning("%s works again after %d failure(s) (%s)", self.what, self._count,
                         self._kind)
        self._kind, self._count = None, 0
