"""The timings home's declaration: its commands and guided forms, for the root
(handlers/__init__.py)."""

from __future__ import annotations

from bot.core.dispatch import Registry
from handlers.timings import commands


def register(registry: Registry) -> None:
    """Add the timings home's commands and guided forms to the registry."""
    for module in (commands,):
        module.register(registry)
