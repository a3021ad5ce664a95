"""What the club commands need of the store: the registry of the deployment's clubs."""

from __future__ import annotations

from typing import Protocol

from bot.domain.club_record import Club
from bot.domain.outcomes import Reason


class ClubDirectory(Protocol):
    """The deployment's clubs (bot/store/clubs.py implements it)."""

    async def add(self, club: Club, who: str, at: str, unix_user: str = "") -> Reason | None:
        """Register a new club; Reason.CLUB_EXISTS if its id is taken."""
        ...

    async def set_enabled(self, club_id: str, enabled: bool, who: str, at: str,
                          unix_user: str = "") -> Reason | None:
        """Enable or disable a club; Reason.NO_CLUB if there is none."""
        ...

    async def get(self, club_id: str) -> Club | None:
        """One club, or None."""
        ...

    async def clubs(self) -> list[Club]:
        """Every club, by id."""
        ...

    async def history(self, club_id: str | None = None) -> list[dict[str, str]]:
        """The audit entries, oldest first."""
        ...
