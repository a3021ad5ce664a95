"""Time as an injected dependency, so timers and briefings are testable without sleeping."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """Anything that can say what time it is (always timezone-aware UTC)."""

    def now(self) -> datetime: ...


class SystemClock:
    """The wall clock."""

    def now(self) -> datetime:
        """Current UTC time."""
        return datetime.now(UTC)


class VirtualClock:
    """A clock that only moves when told to (tests, replay, drills)."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("VirtualClock needs an aware datetime")
        self._now = start.astimezone(UTC)

    def now(self) -> datetime:
        """The current virtual time."""
        return self._now

    def set(self, when: datetime) -> None:
        """Jump to a time (never backwards)."""
        when = when.astimezone(UTC)
        if when > self._now:
            self._now = when

    def advance(self, delta: timedelta) -> None:
        """Move forward by a duration."""
        self._now += delta


def iso(dt: datetime) -> str:
    """ISO-8601 UTC with seconds, the one textual time format in the store."""
    return dt.astimezone(UTC).isoformat(timespec="seconds")


def parse_iso(text: str) -> datetime:
    """Inverse of iso()."""
    return datetime.fromisoformat(text).astimezone(UTC)
