"""The command handlers, one home (package) per domain concept; the root adds each home's
commands and hands each home's deadline firers to the sweep."""

from __future__ import annotations

from datetime import datetime

from bot.core.dispatch import Core, Registry
from bot.domain.messages import Outbound
from bot.schedule.deadlines import Firer, sweep_deadlines
from bot.store import Store
from handlers.briefings import home as briefings
from handlers.common import home as common
from handlers.crowd import home as crowd
from handlers.decisions import home as decisions
from handlers.fixtures import home as fixtures
from handlers.incident import home as incident
from handlers.inspections import home as inspections
from handlers.police import home as police
from handlers.stewarding import home as stewarding
from handlers.timings import home as timings
from handlers.voice import home as voice

HOMES = (fixtures, incident, common, police, briefings, voice, decisions, timings, inspections,
         stewarding, crowd)
DEADLINES: dict[str, Firer] = {**incident.DEADLINES, **stewarding.DEADLINES, **decisions.DEADLINES}


def register(registry: Registry) -> None:
    """Add every home's commands to the registry."""
    for home in HOMES:
        home.register(registry)


async def sweep_escalations(core: Core, store: Store, now: datetime) -> list[Outbound]:
    """The deadline ticker the root registers: fire every home's deadlines due by `now`
    (escalation tiers, reminders, reviews, chasers, missing-person police calls)."""
    return await sweep_deadlines(core, store, now, DEADLINES)
