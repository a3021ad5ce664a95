"""A Redis outage in the log as state changes: one line when Redis stops answering, one when
it answers again (how long, and what was answered "NOT logged" meanwhile), nothing between."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger("bot.outage")

NOT_LOGGED = "{n} commands answered NOT logged"  # what count() is told: "{n}" is the number


class OutageLog:
    """Counts what an outage cost instead of logging it per command or per tick."""

    def __init__(self, wall: Callable[[], float] = time.time,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.wall, self.monotonic = wall, monotonic
        self._since: float | None = None  # monotonic time it stopped answering
        self._counts: dict[str, int] = {}
        self._answered = False  # Redis has answered once: from then on, silence is an outage

    @property
    def down(self) -> bool:
        """Whether Redis is not answering now (as far as the last call knows)."""
        return self._since is not None

    def observe(self, answered: bool) -> None:
        """The store's hook after each call: it answered, or it did not. Before Redis first
        answers, start-up says in one line that it is not answering: not an outage."""
        if answered:
            self._answered = True
            if self._since is not None:
                self.back()
        elif self._since is None and self._answered:
            self.gone()

    def gone(self) -> None:
        """Redis stopped answering: one line, the first time."""
        if self._since is not None:
            return
        self._since = self.monotonic()
        self._counts = {NOT_LOGGED: 0}
        log.warning("Redis not answering (since %s)",
                    time.strftime("%H:%M:%S", time.localtime(self.wall())))

    def count(self, what: str = NOT_LOGGED) -> None:
        """One more thing the outage cost (by default a command answered NOT logged); `what`
        says it for any number, e.g. "{n} refusals not recorded in the audit trail"."""
        self.gone()
        self._counts[what] = self._counts.get(what, 0) + 1

    def back(self) -> None:
        """Redis answers again: one line with how long it was away and what it cost."""
        if self._since is None:
            return
        seconds = self.monotonic() - self._since
        costs = "; ".join(what.format(n=n) for what, n in self._counts.items()
                          if n or what == NOT_LOGGED)
        self._since, self._counts = None, {}
        log.warning("Redis back after %.0f s; %s meanwhile", seconds, costs)
