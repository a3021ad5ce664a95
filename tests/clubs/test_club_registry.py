"""The registry of clubs against a real Redis (#39): a club round-trips, a second add of an
id is refused and writes nothing, enabling and disabling are states kept in an append-only
audit stream, and every key lives under the deployment's one hash tag."""

from __future__ import annotations

from bot.domain.club_record import Club, SecretRef
from bot.domain.outcomes import Reason
from bot.store.base import deployment_prefix
from bot.store.clubs import ClubRegistry


def a_club(club_id: str = "west-ham", name: str = "West Ham United") -> Club:
    return Club(club_id, name, True, SecretRef("env", "WHU_TG"), SecretRef("env", "WHU_TGS"),
                SecretRef("env", "WHU_SL"), SecretRef("file", "/run/secrets/whu-signing"),
                grounds=("london_stadium",), retention_days=400)


async def test_a_club_round_trips(store):
    reg = ClubRegistry(store.gateway)
    assert await reg.get("west-ham") is None and await reg.clubs() == []
    assert await reg.add(a_club(), "cli:club", "2026-12-05T20:00:00+00:00") is None
    assert await reg.add(a_club("arsenal", "Arsenal"), "cli:club", "2026-12-05T20:01:00+00:00") \
        is None
    assert await reg.get("west-ham") == a_club()
    assert [c.club_id for c in await reg.clubs()] == ["arsenal", "west-ham"]


async def test_adding_an_existing_id_is_refused_and_changes_nothing(store):
    reg = ClubRegistry(store.gateway)
    await reg.add(a_club(), "cli:club", "2026-12-05T20:00:00+00:00")
    again = await reg.add(a_club(name="Someone Else"), "cli:other", "2026-12-05T21:00:00+00:00")
    assert again is Reason.CLUB_EXISTS
    assert (await reg.get("west-ham")).name == "West Ham United"
    assert [e["action"] for e in await reg.history()] == ["club.add"]


async def test_disable_and_enable_are_states_on_the_audit_trail(store):
    reg = ClubRegistry(store.gateway)
    await reg.add(a_club(), "cli:club", "2026-12-05T20:00:00+00:00", "ops (uid 1000)")
    assert await reg.set_enabled("west-ham", False, "cli:club", "2026-12-05T20:05:00+00:00",
                                 "ops (uid 1000)") is None
    assert (await reg.get("west-ham")).enabled is False
    assert [c.club_id for c in await reg.clubs()] == ["west-ham"]  # kept, never deleted
    await reg.set_enabled("west-ham", True, "cli:club", "2026-12-05T20:10:00+00:00")
    assert (await reg.get("west-ham")).enabled is True
    trail = await reg.history("west-ham")
    assert [(e["action"], e["at"]) for e in trail] == [
        ("club.add", "2026-12-05T20:00:00+00:00"), ("club.disable", "2026-12-05T20:05:00+00:00"),
        ("club.enable", "2026-12-05T20:10:00+00:00")]
    assert trail[0]["unix_user"] == "ops (uid 1000)" and trail[0]["who"] == "cli:club"
    assert "env:WHU_TG" in trail[0]["detail"]  # the reference, which is no secret


async def test_an_unknown_club_is_refused_with_nothing_written(store):
    reg = ClubRegistry(store.gateway)
    assert await reg.set_enabled("nope", False, "cli:club", "2026-12-05T20:00:00+00:00") \
        is Reason.NO_CLUB
    assert await reg.get("nope") is None and await reg.history() == []


async def test_every_key_shares_the_deployment_tag(store):
    reg = ClubRegistry(store.gateway)
    await reg.add(a_club(), "cli:club", "2026-12-05T20:00:00+00:00")
    await reg.set_enabled("west-ham", False, "cli:club", "2026-12-05T20:05:00+00:00")
    keys = await store.gateway.call(lambda r: r.keys("md:*"))
    assert keys and all(k.startswith(deployment_prefix()) for k in keys), keys
    assert deployment_prefix() == "md:{deployment}:"
