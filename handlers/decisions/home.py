"""The decisions home's declaration: its commands and guided forms (register), the deadlines
it fires (DEADLINES) and the slots it plans (SLOTS), for the root (handlers/__init__.py)."""

from __future__ import annotations

from collections.abc import Mapping

from bot.core.dispatch import Registry
from bot.schedule.deadlines import Firer
from bot.schedule.scheduler import HomeSlots
from handlers.decisions import commands, review_timer

# deadline tag -> what fires it; the root hands these to the deadline sweep
DEADLINES: Mapping[str, Firer] = {"review": review_timer.fire_review}
SLOTS: Mapping[str, HomeSlots] = {}  # plans no slots of its own

# What this home uses of the core and of the store's facades (its commands' ctx.core and
# ctx.facades, its timers' core): the architecture test fails on a use not declared.
CORE = frozenset({"changed", "notifier", "settings"})
FACADES = frozenset({"deadlines", "decisions", "forms"})


def register(registry: Registry) -> None:
    """Add the decisions home's commands and guided forms to the registry."""
    commands.register(registry)
