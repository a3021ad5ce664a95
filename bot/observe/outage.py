"""A Redis outage in the log as state changes: one line when Redis stops answering, one when
it answers again (how long, and what was answered "NOT logged" meanwhile), nothing between.
Writes refused by a slot's master that still answers (NOREPLICAS) are a state of their own:
Redis is not down, so they never flip the outage; one line when the first is refused, one
once none has been for REFUSALS_QUIET_S.

An outage is over once Redis has answered for BACK_AFTER_S with no call failing: on a Cluster
with one master paused, calls to the other masters answer between those that fail, and each
answer used to end the outage and the next failure start another (two lines each, many a
second for the whole pause)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger("bot.outage")

NOT_LOGGED = "{n} commands answered NOT logged"  # what count() is told: "{n}" is the number
REFUSALS_QUIET_S = 30.0  # no write refused for this long: the refusals are over
BACK_AFTER_S = 2.0  # answering this long with no call failing: the outage is over


class OutageLog:
    """Counts what an outage cost instead of logging it per command or per tick."""

    def __init__(self, wall: Callable[[], float] = time.time,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.wall, self.monotonic = wall, monotonic
        self._since: float | None = None  # monotonic time it stopped answering
        self._answering: float | None = None  # in an outage, since when no call failed
        self._counts: dict[str, int] = {}
        self._answered = False  # Redis has answered once: from then on, silence is an outage
        self._refused_since: float | None = None  # monotonic time writes began to be refused
        self._refused_last = 0.0
        self._refused_counts: dict[str, int] = {}

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
                now = self.monotonic()
                if self._answering is None:
                    self._answering = now
                if now - self._answering >= BACK_AFTER_S:
                    self.back()
            if self._refused_since is not None \
                    and self.monotonic() - self._refused_last >= REFUSALS_QUIET_S:
                self._refusals_over()
        elif self._answered:
            self.gone()

    def gone(self) -> None:
        """Redis stopped answering: one line, the first time."""
        self._answering = None
        if self._since is not None:
            return
        self._since = self.monotonic()
        self._counts = {NOT_LOGGED: 0}
        log.warning("Redis not answering (since %s)",
                    time.strftime("%H:%M:%S", time.localtime(self.wall())))

    def count(self, what: str = NOT_LOGGED, *, refused: bool = False) -> None:
        """One more thing the outage cost (by default a command answered NOT logged); `what`
        says it for any number, e.g. "{n} refusals not recorded in the audit trail".
        `refused`: a write a slot's master refused while answering (WritesRefused)."""
        if refused:
            self.refused(what)
            return
        self.gone()
        self._counts[what] = self._counts.get(what, 0) + 1

    def refused(self, what: str | None = NOT_LOGGED) -> None:
        """A write refused by a master that answers: one line when the first is (`what`:
        what it cost, as for `count`; None, nothing to count)."""
        now = self.monotonic()
        if self._refused_since is None:
            self._refused_since = now
            self._refused_counts = {NOT_LOGGED: 0}
            log.warning("Redis refusing writes to a slot (since %s: its master has no replica "
                        "to confirm them); reads and other slots go on",
                        time.strftime("%H:%M:%S", time.localtime(self.wall())))
        self._refused_last = now
        if what is not None:
            self._refused_counts[what] = self._refused_counts.get(what, 0) + 1

    @property
    def refusing(self) -> bool:
        """Whether writes were refused lately (see `refused`)."""
        return self._refused_since is not None

    def _refusals_over(self) -> None:
        assert self._refused_since is not None
        seconds = self._refused_last - self._refused_since
        costs = "; ".join(what.format(n=n) for what, n in self._refused_counts.items()
                          if n or what == NOT_LOGGED)
        self._refused_since, self._refused_counts = None, {}
        log.warning("Redis writes refused for %.0f s, none for %.0f s since; %s meanwhile",
                    seconds, REFUSALS_QUIET_S, costs)

    def back(self) -> None:
        """Redis answers again: one line with how long it was away and what it cost."""
        if self._since is None:
            return
        end = self._answering if self._answering is not None else self.monotonic()
        seconds = end - self._since
        costs = "; ".join(what.format(n=n) for what, n in self._counts.items()
                          if n or what == NOT_LOGGED)
        self._since, self._counts, self._answering = None, {}, None
        log.warning("Redis back after %.0f s; %s meanwhile", seconds, costs)
