"""The voice home's declaration: its commands and guided forms, for the root
(handlers/__init__.py)."""

from __future__ import annotations

from bot.core.dispatch import Registry
from handlers.voice import notes


def register(registry: Registry) -> None:
    """Add the voice home's commands and guided forms to the registry."""
    for module in (notes,):
        module.register(registry)
