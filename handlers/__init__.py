"""The command handlers, one home (package) per domain concept; the root adds each home's
commands, hands each home's deadline firers to the sweep and its slots to the scheduler."""

from __future__ import annotations

from datetime import datetime

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


def deadline_firers() -> dict[str, Firer]:
    """Deadline tag -> the firer of the home that declared it; a tag declared twice is a
    mistake found at start-up."""
    firers: dict[str, Firer] = {}
    for home in HOMES:
        for tag, fire in home.DEADLINES.items():
            if tag in firers:
                raise ValueError(f"deadline tag {tag!r} declared by two homes")
            firers[tag] = fire
    return firers


def home_slots() -> dict[str, HomeSlots]:
    """Slot kind -> the home that plans and sends it (for the scheduler); a kind declared
    twice is a mistake found at start-up."""
    slots: dict[str, HomeSlots] = {}
    for home in HOMES:
        for kind, planner in home.SLOTS.items():
            if kind in slots:
                raise ValueError(f"slot kind {kind!r} declared by two homes")
            slots[kind] = planner
    return slots


DEADLINES = deadline_firers()
SLOTS = home_slots()

def register(registry: Registry) -> None:
    """Add every home's commands to the registry."""
    for home in HOMES:
        home.register(registry)


async def sweep_escalations(core: Core, store: Store, now: datetime) -> list[Outbound]:
    """The deadline ticker the root registers: fire every home's deadlines due by `now`
    (escalation tiers, reminders, reviews, chasers, missing-person police calls)."""
    return await sweep_deadlines(core, store, now, DEADLINES)
