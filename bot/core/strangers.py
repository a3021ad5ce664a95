"""Refusals of people and clients the bot does not know, kept apart from the audit trail.

Anyone can message the bot or hit the web view; if each refusal went into the members'
audit trail, a flood would push the genuine entries out of its capped stream. Strangers'
refusals go to a stream of their own (capped), at most `per_minute` a minute per process;
the ones not written are counted and the count rides on the next entry written.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.store import StoreUnavailable
from bot.store.audit_trail import AuditTrail

PER_MINUTE = 30
FIELD_MAX = 200  # characters kept of any value a stranger sent (an Origin, a path, an id)


class StrangerAudit:
    """Writes strangers' refusals, rate-limited, to the store's stranger stream."""

    def __init__(self, trail: AuditTrail, now_ts: Callable[[], float],
                 per_minute: int = PER_MINUTE) -> None:
        self.trail = trail
        self.now_ts = now_ts
        self.per_minute = per_minute
        self._minute, self._written, self._dropped = -1, 0, 0

    async def refused(self, who: str, detail: str, at: str) -> None:
        """Record one refusal unless this minute's quota is spent (then count it)."""
        minute = int(self.now_ts()) // 60
        if minute != self._minute:
            self._minute, self._written = minute, 0
        if self._written >= self.per_minute:
            self._dropped += 1
            return
        self._written += 1
        fields = {"at": at, "who": who[:FIELD_MAX], "action": "refused",
                  "detail": detail[:FIELD_MAX]}
        if self._dropped:
            fields["not_written_before"] = str(self._dropped)
        try:
            await self.trail.audit_stranger(fields)
        except StoreUnavailable:
            self._dropped += 1
            return
        self._dropped = 0
