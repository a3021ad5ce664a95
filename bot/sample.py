"""The sample fixture a newcomer finds ready in the console."""

from __future__ import annotations

from datetime import timedelta

from bot.core.dispatch import Core
from bot.domain.clock import iso
from bot.domain.deployment import RotaRow
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.ledger import Event

# `/fixture add` ids are <home>-<away>-<date> with letters and digits between the hyphens
# (handlers.fixtures.commands.fixture_id): one more hyphen-separated word can never be one
# of them, so a replay of the same match on the same date (the bundled night) gets a
# fixture of its own.
SAMPLE_PREFIX = "sample-"
# The sample's small rota (the club's steward id, name, post): six of the London Stadium's
# eight posts filled, the STB mobile post and the Gate A fire point left for /deploy.
SAMPLE_ROTA = (RotaRow("14", "Steward 14", "stb_250_gangway"),
               RotaRow("15", "Steward 15", "stb_256_gangway"),
               RotaRow("9", "Steward 9", "stb_105_vom"),
               RotaRow("31", "Steward 31", "stb_walkway_top"),
               RotaRow("21", "Steward 21", "gate_b_lane_1"),
               RotaRow("22", "Steward 22", "gate_b_lane_2"))


async def ensure_sample_fixture(core: Core, *, rota: bool = False) -> Fixture:
    """Create tonight's West Ham v Chelsea (C-IRD, London Stadium) unless a fixture is active;
    with `rota`, its deployment plan filled from SAMPLE_ROTA (the console's newcomer sees one)."""
    from handlers.fixtures.commands import create_fixture, fixture_id

    active = await core.active_fixture()
    if active is not None:
        return active
    tz = core.settings.zone
    local_now = core.clock.now().astimezone(tz)
    ko = local_now.replace(hour=19, minute=45, second=0, microsecond=0)
    if ko < local_now:
        ko += timedelta(days=1)
    fx = Fixture(
        id=SAMPLE_PREFIX + fixture_id("West Ham", "Chelsea", ko), home="West Ham United",
        away="Chelsea",
        kickoff=ko, ground="london_stadium", category="C-IRD",
        category_why="history of disorder between the clubs; midweek evening cup tie",
        competition="EFL Cup", attendance=62500, away_allocation=3000,
        notes={
            "segregation": "Away fans north-east corner upper tier; sterile zone and netting "
                           "along the NE segregation line; walkway at the top of the STB split.",
            "gates": "Away turnstiles (Gate B) open 17:45; home gates A, C, E, F at 17:45.",
            "alcohol": "No alcohol in view of the pitch; away concourse bars closed.",
            "pyro": "Search regime at all turnstiles; pyro dogs at Gate B.",
            "travel": "Away fans via Stratford; held dispersal at full time, coaches first.",
            "risk_groups": "2 home risk groups (approx. 60), 1 away risk group (approx. 40)",
            "contacts": "Safety Officer ch.1; Police Silver via control; DFOs ch.4",
        },
    )
    ev = Event(kind="fixture.created", at=iso(core.clock.now()), by="system:sample",
               role="admin", data={"id": fx.id, **fx.to_hash()}, phase="pre")
    await create_fixture(core, core.store, fx, ev, f"sample:{fx.id}")
    if rota:
        rows = [[r.steward, r.name, r.post] for r in SAMPLE_ROTA]
        filled = Event(kind="deploy.filled", at=iso(core.clock.now()), by="system:sample",
                       role="admin", data={"rows": rows}, phase="pre")
        await core.facades.stewarding.deploy(fx.id, list(SAMPLE_ROTA), filled,
                                           f"sample-rota:{fx.id}")
    await core.facades.choices.set_active_fixture(fx.id)
    core.cache.drop("active")
    return (await core.active_fixture()) or fx


