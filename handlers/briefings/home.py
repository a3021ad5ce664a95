"""The briefings home's declaration: its commands and guided forms (register) and the
deadlines and slots it fires (none), for the root (handlers/__init__.py)."""

from __future__ import annotations

from collections.abc import Mapping

from bot.core.dispatch import Registry
from bot.schedule.deadlines import Firer
from bot.schedule.scheduler import HomeSlots
from handlers.briefings import briefing_content, commands

DEADLINES: Mapping[str, Firer] = {}  # fires no deadlines
SLOTS: Mapping[str, HomeSlots] = {}  # plans no slots of its own
# what the scheduler's briefing and summary slots say
CONTENT = briefing_content.BriefingSlotContent()

# What this home uses of the core and of the store's facades (its commands' ctx.core and
# ctx.facades, its timers' core): the architecture test fails on a use not declared.
CORE = frozenset({"changed", "fixture_for", "grounds", "notifier", "roles", "settings"})
FACADES = frozenset({"stewarding", "timings", "views"})


def register(registry: Registry) -> None:
    """Add the briefings home's commands and guided forms to the registry."""
    commands.register(registry)
