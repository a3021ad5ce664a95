"""Telegram's bot-wide limit alone, and a wall clock that moves only when told: for tests of
the rate windows every replica shares."""

from __future__ import annotations

from bot.delivery.ratelimit import Limit

BOT_WIDE_30 = {"telegram": (Limit(30, 1.0, "platform", from_answer=True),)}


class WallClock:
    """An injected wall clock (seconds) that moves only when a test moves it."""

    def __init__(self) -> None:
        self.t = 1_800_000_000.0

    def __call__(self) -> float:
        return self.t
