"""Platform-neutral command handlers, one module per area; register() adds them all."""

from __future__ import annotations

from bot.core.dispatch import Registry
from handlers import (
    admin,
    amend,
    briefings,
    checkin,
    decisions,
    deploy,
    fixtures,
    forms,
    hot,
    incidents,
    inspections,
    merge,
    methane,
    missing,
    note,
    pack,
    police,
    status,
    stewarding,
    tabard,
    timings,
    voice_notes,
    warnings,
    web_signin,
)


def register(registry: Registry) -> None:
    """Add every module's commands to the registry."""
    for module in (admin, incidents, forms, police, status, fixtures, briefings,
                   amend, merge, methane, hot, note, voice_notes, web_signin, decisions,
                   timings, inspections, pack, stewarding, deploy, checkin,
                   missing, tabard, warnings):
        module.register(registry)
