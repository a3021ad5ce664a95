"""What control is told about the outbox lag: raised once when delivery falls behind and keeps
falling, and once when it has caught up."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OutboxLag:
    """The oldest undelivered message's age, and whether the alarm is raised (or cleared)."""

    lag_s: float
    raised: bool
