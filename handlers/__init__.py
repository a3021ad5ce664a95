"""The command handlers, one home (package) per domain concept; the root adds each home's
commands, hands each home's deadline firers to the sweep and its slots to the scheduler."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from types import ModuleType
from typing import Any

from bot.core.dispatch import Core, Registry
from bot.domain.messages import Outbound
from bot.schedule.deadlines import Firer, sweep_deadlines
from bot.schedule.scheduler import HomeSlots
from bot.store import Store
from handlers.briefings import home as briefings_home
from handlers.common import home as common_home
from handlers.crowd import home as crowd_home
from handlers.decisions import home as decisions_home
from handlers.fixtures import home as fixtures_home
from handlers.incident import home as incident_home
from handlers.inspections import home as inspections_home
from handlers.police import home as police_home
from handlers.stewarding import home as stewarding_home
from handlers.timings import home as timings_home
from handlers.voice import home as voice_home

# every home, in the order its commands are registered (the order of the command menus)
HOMES = (fixtures_home, incident_home, common_home, police_home, briefings_home, voice_home,
         decisions_home, timings_home, inspections_home, stewarding_home, crowd_home)


def declared(name: str, mapping: Callable[[ModuleType], Mapping[str, Any]]) -> dict[str, Any]:
    """What every home declares under one attribute, merged (deadline tag -> firer, slot
    kind -> planner); a key two homes declare is a mistake found at start-up."""
    merged: dict[str, Any] = {}
    for home in HOMES:
        for key, value in mapping(home).items():
            if key in merged:
                raise ValueError(f"{name} {key!r} declared by two homes")
            merged[key] = value
    return merged


DEADLINES: dict[str, Firer] = declared("deadline tag", lambda home: home.DEADLINES)
SLOTS: dict[str, HomeSlots] = declared("slot kind", lambda home: home.SLOTS)
BRIEFING_CONTENT = briefings_home.CONTENT  # what the scheduler's briefings and summaries say


def register(registry: Registry) -> None:
    """Add every home's commands to the registry."""
    for home in HOMES:
        home.register(registry)


async def sweep_escalations(core: Core, store: Store, now: datetime) -> list[Outbound]:
    """The deadline ticker the root registers: fire every home's deadlines due by `now`
    (escalation tiers, reminders, reviews, chasers, missing-person police calls)."""
    return await sweep_deadlines(core, store, core.facades.deadlines, now, DEADLINES)
