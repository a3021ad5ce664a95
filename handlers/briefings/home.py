"""The briefings home's declaration: its commands and guided forms (register) and the
deadlines it fires (none), for the root (handlers/__init__.py)."""

from __future__ import annotations

from collections.abc import Mapping

from bot.core.dispatch import Registry
from bot.schedule.deadlines import Firer
from handlers.briefings import commands

DEADLINES: Mapping[str, Firer] = {}  # fires no deadlines


def register(registry: Registry) -> None:
    """Add the briefings home's commands and guided forms to the registry."""
    commands.register(registry)
