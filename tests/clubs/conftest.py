"""Many clubs on one fake of each platform (tests/support/clubs.py)."""

from __future__ import annotations

from tests.support.clubs import slack_clubs, telegram_clubs  # noqa: F401 (fixtures)
