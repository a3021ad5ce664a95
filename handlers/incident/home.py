"""The incident home's declaration: its commands and guided forms (register), the deadlines
it fires (DEADLINES) and the slots it plans (SLOTS), for the root (handlers/__init__.py)."""

from __future__ import annotations

from collections.abc import Mapping

from bot.core.dispatch import Registry
from bot.schedule.deadlines import Firer
from bot.schedule.scheduler import HomeSlots
from handlers.incident import amend, commands, escalation, hot, merge, methane, note

# deadline tag -> what fires it; the root hands these to the deadline sweep
DEADLINES: Mapping[str, Firer] = {"ack": escalation.fire_ack, "open": escalation.fire_open}
SLOTS: Mapping[str, HomeSlots] = {}  # plans no slots of its own

# What this home uses of the core and of the store's facades (its commands' ctx.core and
# ctx.facades, its timers' core): the architecture test fails on a use not declared.
CORE = frozenset({"changed", "grounds", "notifier", "roles", "settings"})
FACADES = frozenset({"deadlines", "forms", "reports", "views"})


def register(registry: Registry) -> None:
    """Add the incident home's commands and guided forms to the registry."""
    for module in (commands, amend, merge, methane, hot, note):
        module.register(registry)
