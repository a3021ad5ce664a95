"""The common home's declaration: its commands and guided forms, for the root
(handlers/__init__.py)."""

from __future__ import annotations

from bot.core.dispatch import Registry
from handlers.common import forms, pack, status, web_signin


def register(registry: Registry) -> None:
    """Add the common home's commands and guided forms to the registry."""
    for module in (forms, status, web_signin, pack):
        module.register(registry)
