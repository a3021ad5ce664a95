"""Time as an injected dependency, so timers and briefings are testable without sleeping."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
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


class FileClock:
    """Virtual time shared by several processes (replica drills and tests): the ISO time
    written in a file, re-read when the file changes; it never goes backwards."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp = -1
        self._now = datetime(2000, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        """The time in the file (the last one read when it cannot be read now)."""
        try:
            stamp = self.path.stat().st_mtime_ns
            if stamp != self._stamp:
                when = parse_iso(self.path.read_text().strip())
                self._stamp = stamp
                self._now = max(self._now, when)
        except (OSError, ValueError):
            pass  # mid-write or gone: keep the last time read
        return self._now

    @staticmethod
    def write(path: Path, when: datetime) -> None:
        """Set the time every FileClock on `path` reads (atomically: write, then rename)."""
        tmp = path.with_name(path.name + ".new")
        tmp.write_text(iso(when))
        tmp.replace(path)


def iso(dt: datetime) -> str:
    """ISO-8601 UTC with seconds, the one textual time format in the store."""
    return dt.astimezone(UTC).isoformat(timespec="seconds")


def parse_iso(text: str) -> datetime:
    """Inverse of iso()."""
    return datetime.fromisoformat(text).astimezone(UTC)
