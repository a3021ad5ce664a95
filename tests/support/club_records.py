"""Two clubs' records in one Redis, written through the public store API: each club's store is
`Store(gateway.for_club(club))`, its records a fixture of the SAME id in every club, an
incident and an arrest, every one carrying the club's own marker text."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

from bot.app import build_core
from bot.domain.clock import VirtualClock, iso
from bot.domain.club_record import Club, SecretRef
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.ledger import Event
from bot.domain.messages import Command
from bot.settings import Settings
from bot.store import Store
from bot.store.clubs import ClubRegistry
from handlers.fixtures.commands import create_fixture

FIXTURE = "clubtest-rovers-20261125"  # one id, in every club's key space
KICKOFF = datetime(2026, 11, 25, 19, 45, tzinfo=UTC)
SEASON = "2026-27"
# distinct incidents (one of a type nearby would be added to the first, not counted again)
KINDS = ("missile @stb_walkway s4", "pyro @away_upper s3", "alcohol @stb_lower s2")
_ids = itertools.count(1)


def team(marker: str) -> str:
    """The home side of a club's fixture: its marker, so every listing of it shows whose."""
    return f"{marker} Rovers"


async def register(store: Store, club_id: str, *, enabled: bool = True) -> None:
    """Register a club in the deployment's registry (its secrets by reference only)."""
    ref = SecretRef.parse(f"env:{club_id.upper()}_SECRET")
    club = Club(club_id, f"{club_id.title()} FC", enabled, ref, ref, ref, ref,
                grounds=("london_stadium",))
    assert await ClubRegistry(store.gateway).add(club, "test:setup", iso(KICKOFF)) is None


async def disable(store: Store, club_id: str) -> None:
    """Disable a registered club."""
    registry = ClubRegistry(store.gateway)
    assert await registry.set_enabled(club_id, False, "test:setup", iso(KICKOFF)) is None


async def write_records(store: Store, settings: Settings, marker: str,
                        incidents: int = 1) -> None:
    """FIXTURE in this store (a club's view, or the single-club deployment's) with
    `incidents` incidents and an arrest, all marked with `marker`."""
    clock = VirtualClock(datetime(2026, 11, 25, 18, 0, tzinfo=UTC))
    core = build_core(store, settings, clock, cache_ttl=0)
    fx = Fixture(FIXTURE, team(marker), "Visitors FC", KICKOFF, "london_stadium",
                 category="B", competition=f"{marker} League")
    ev = Event("fixture.created", iso(clock.now()), "system:test", "admin",
               {"id": FIXTURE, **fx.to_hash()}, phase="pre")
    assert await create_fixture(core, store, fx, ev, f"test:create:{marker}")
    reports = [(f"/incident {kind} {marker} coins thrown {n}", "steward")
               for n, kind in enumerate(KINDS[:incidents], 1)]
    for text, who in ((f"/fixture use {FIXTURE} all", "admin"), *reports,
                      ("/arrest missiles inside away", "police_liaison")):
        result = await core.handle(Command(platform="console", chat=who, user=who, text=text,
                                           dedupe_key=f"test:club:{next(_ids)}",
                                           private=True))
        assert result is not None and result.reply.ok, (text, result)
