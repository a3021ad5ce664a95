"""The stewarding home's declaration: its commands and guided forms (register), the deadlines
it fires (DEADLINES) and the slots it plans (SLOTS), for the root (handlers/__init__.py)."""

from __future__ import annotations

from collections.abc import Mapping

from bot.core.dispatch import Registry
from bot.schedule.deadlines import Firer
from bot.schedule.scheduler import HomeSlots
from handlers.stewarding import (
    broadcasts,
    chase_timer,
    checkin,
    deploy,
    missing,
    missing_timer,
    rollcall_timer,
    tabard,
)

# deadline tag -> what fires it; the root hands these to the deadline sweep
DEADLINES: Mapping[str, Firer] = {
    "police": missing_timer.fire_missing,
    "chase": chase_timer.fire_chase,
}
# slot kind -> the home that plans and sends it; the root hands these to the scheduler
SLOTS: Mapping[str, HomeSlots] = {"rollcall": rollcall_timer.RollCallSlots()}

# What this home uses of the core and of the store's facades (its commands' ctx.core and
# ctx.facades, its timers' core): the architecture test fails on a use not declared.
CORE = frozenset({"changed", "grounds", "member", "notifier", "roster", "settings"})
FACADES = frozenset({"choices", "deadlines", "forms", "stewarding"})


def register(registry: Registry) -> None:
    """Add the stewarding home's commands and guided forms to the registry."""
    for module in (broadcasts, deploy, checkin, missing, tabard):
        module.register(registry)
