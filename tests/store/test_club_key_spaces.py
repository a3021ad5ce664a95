"""One deployment, many clubs (#39): a club's store builds its keys inside the club's hash tag,
so clubs spread across Cluster slots and a request for one club never touches another's
keys; the single-club store keeps exactly the keys it always had."""

from __future__ import annotations

import re

import pytest
from redis.crc import key_slot

from bot.app import build_core
from bot.core.dispatch import Core
from bot.domain.clock import VirtualClock
from bot.domain.messages import Command, Outbound, Reply
from bot.sample import ensure_sample_fixture
from bot.settings import Settings
from bot.store import Store
from bot.store.base import (
    KeySpace,
    bot_prefix,
    chat_prefix,
    fx_prefix,
    ops_prefix,
    platform_prefix,
    tag_prefix,
)

pytestmark = pytest.mark.redis

AT = "2026-11-25T19:30:00+00:00"
KINDS = ("pyro @away_upper", "missile @seg_ne", "medical @gate_f")


async def _club_core(store: Store, club: str, settings: Settings,
                     clock: VirtualClock) -> Core:
    """A core over one club's store (or the single-club store, club ''), sample fixture on."""
    gateway = store.gateway.for_club(club) if club else store.gateway
    core = build_core(Store(gateway), settings, clock, cache_ttl=0)
    await ensure_sample_fixture(core)
    return core


async def _say(core: Core, text: str, who: str, dedupe: str) -> None:
    await core.handle(Command(platform="console", chat=who, user=who, text=text,
                              dedupe_key=dedupe, private=True))


async def _burst(core: Core, tag: str, reports: int) -> str:
    """Reports, an acknowledgement, an invite redeemed, an audit entry and a form in progress,
    each through the public store API; the fixture's id."""
    fx = await core.active_fixture()
    assert fx is not None
    for i, what in enumerate(KINDS[:reports]):  # unlike each other: none joins another
        await _say(core, f"/incident {what} s3 {tag} flare {i}", "steward", f"{tag}-report-{i}")
    await _say(core, "/ack 1", "control", f"{tag}-ack")
    members = core.facades.members
    await members.create_invite(f"code-{tag}", "steward", "control", 3600)
    assert await members.redeem_invite(f"code-{tag}", f"telegram:{tag}", tag, AT) == "steward"
    await core.facades.audit.audit("control", "export", f"{tag} export", AT, fixture=fx.id)
    await core.facades.forms.save_form(fx.id, "steward", {"step": tag}, 600)
    delivery, platform = core.facades.delivery, core.facades.platform
    await delivery.outbox.add(fx.id, [Outbound("control", Reply(f"{tag} notice"))])
    await delivery.refs.set_message_ref(fx.id, "telegram", "-100", "INC-1", f"m-{tag}", 1)
    windows = [(delivery.windows.key("telegram", s), 20, 60.0)
               for s in ("chat:-100:20/60", "bot:30/1")]
    assert await delivery.windows.take(windows, 1_700_000_000.0) == 0.0
    assert await delivery.lease("sweeper", tag).tick()
    assert await platform.polling("42", tag).tick()
    assert await platform.seen.first(f"telegram:update:{tag}")
    await platform.watch_home(f"U-{tag}", 1_700_000_000.0)
    await core.facades.changes.publish_change("fixture", fx.id, tag)
    await core.facades.notices.claim_notice("refusing", 60)
    return fx.id


async def _keys(store: Store) -> set[str]:
    return {k async for k in store.gateway.r.scan_iter(match="*", count=1000)}


def _tag(key: str) -> str:
    return key[key.index("{") + 1:key.index("}")]


async def test_two_clubs_on_one_redis_keep_separate_records(store, settings, clock):
    a = await _club_core(store, "club-a", settings, clock)
    b = await _club_core(store, "club-b", settings, clock)
    fx_a, fx_b = await _burst(a, "a", 2), await _burst(b, "b", 1)
    assert fx_a == fx_b  # the same fixture id in both clubs: still two records

    for core, tag, other, reports in ((a, "a", "b", 2), (b, "b", "a", 1)):
        inc = await core.store.incident(fx_a, 1)
        assert inc is not None and inc.description.startswith(f"{tag} flare 0")  # INC-1 each
        assert len(await core.facades.views.open_ids(fx_a)) == reports
        assert await core.store.incident(fx_a, reports + 1) is None
        assert not [e for e in await core.store.events(fx_a) if f"{other} flare" in str(e.data)]
        assert (await core.facades.members.member(f"telegram:{tag}") or {})["name"] == tag
        assert await core.facades.members.member(f"telegram:{other}") is None
        audit = await core.facades.audit.audit_log(fixture=fx_a)
        assert [e["detail"] for e in audit] == [f"{tag} export"]
        form = await core.facades.forms.form(fx_a, "steward")
        assert form is not None and form["step"] == tag
        outbox = core.facades.delivery.outbox
        await outbox.ensure_group(fx_a)
        assert [o.reply.text for _, o in await outbox.read(fx_a, "t", 10)] == [f"{tag} notice"]
        refs = core.facades.delivery.refs
        assert await refs.message_ref(fx_a, "telegram", "-100", "INC-1") == f"m-{tag}"
        assert await refs.ref_of_message("telegram", "-100", f"m-{other}") is None
        lease = core.facades.delivery.lease("sweeper", tag)
        assert await lease.tick()  # each club holds its own singleton duties
    assert (await a.store.counts(fx_a)) != (await b.store.counts(fx_a))


async def test_every_key_a_club_writes_carries_the_club_in_its_hash_tag(store, settings,
                                                                        clock):
    core = await _club_core(store, "club-a", settings, clock)
    await _burst(core, "a", 3)
    keys = await _keys(store)
    assert len(keys) > 20
    assert sorted(k for k in keys if not _tag(k).startswith("club-a/")) == []
    assert all(k.startswith("md:{club-a/") for k in keys)


async def test_the_single_club_store_keeps_todays_keys(store, settings, clock):
    assert (fx_prefix("fx1"), ops_prefix(), chat_prefix("telegram", "-100"),
            bot_prefix("telegram", "42"), platform_prefix("slack"), tag_prefix("lane")) == (
        "md:{fx1}:", "md:{ops}:", "md:{chat:telegram:-100}:", "md:{tg:42}:",
        "md:{rl:slack}:", "md:{lane}:")
    await _burst(await _club_core(store, "", settings, clock), "a", 3)
    single = await _keys(store)
    assert all("/" not in _tag(k) for k in single)
    await store.reset_for_tests()
    await _burst(await _club_core(store, "club-a", settings, clock), "a", 3)
    club = await _keys(store)
    # the same writes make the same keys, the club's tag aside (on a Cluster, the second copy
    # of the bot-wide windows is numbered from the tag it copies: bot/store/copies.py)
    assert {_copy_unnumbered(k.replace("{club-a/", "{", 1)) for k in club} == \
        {_copy_unnumbered(k) for k in single}


def _copy_unnumbered(key: str) -> str:
    return re.sub(r":copy\d+}", ":copy}", key)


async def test_a_clubs_view_shares_the_deployments_client_and_state(store, monkeypatch):
    view = store.gateway.for_club("club-a")
    assert view.space == KeySpace("club-a") and store.gateway.space == KeySpace()
    assert view.r is store.gateway.r and view.for_club("club-b").space.club == "club-b"
    before = store.gateway.replica_acks
    view.replica_acks = before + 2  # e.g. a replica count learned through one club
    assert store.gateway.replica_acks == before + 2
    store.gateway.replica_acks = before
    closed: list[bool] = []

    async def aclose() -> None:
        closed.append(True)

    monkeypatch.setattr(store.gateway.r, "aclose", aclose)
    await Store(view).close()  # a club's store closing leaves the shared client open
    assert closed == []


def test_clubs_spread_across_cluster_slots():
    clubs = [f"club-{i}" for i in range(10)]
    slots = {key_slot((fx_prefix("fx1", KeySpace(c)) + "meta").encode()) for c in clubs}
    assert len(slots) >= 8
    assert key_slot(fx_prefix("fx1", KeySpace("club-0")).encode()) == \
        key_slot(fx_prefix("fx1", KeySpace("club-0")).encode() + b"log")  # one slot a club


def test_a_club_id_that_would_break_a_hash_tag_is_refused():
    for bad in ("a}b", "a{b", "a/b", "a*", "a b", "-a"):
        with pytest.raises(ValueError):
            KeySpace(bad)
