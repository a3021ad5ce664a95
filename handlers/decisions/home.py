"""The decisions home's declaration: its commands and guided forms (register) and the deadlines
it fires (DEADLINES), for the root (handlers/__init__.py)."""

from __future__ import annotations

from collections.abc import Mapping

from bot.core.dispatch import Registry
from bot.schedule.deadlines import Firer
from handlers.decisions import commands, review_timer

# deadline tag -> what fires it; the root hands these to the deadline sweep
DEADLINES: Mapping[str, Firer] = {"review": review_timer.fire_review}


def register(registry: Registry) -> None:
    """Add the decisions home's commands and guided forms to the registry."""
    commands.register(registry)
