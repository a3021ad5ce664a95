"""Several live fixtures in one deployment (issue 12 item 5): each person or chat works on
its own fixture, reports and cards go to that fixture's chats, escalations and briefings run
per fixture, and the escalation index shrinks as fixtures end."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest_asyncio

from bot.app import build_core
from bot.core.dispatch import Core
from bot.core.roles import Member
from bot.delivery.ratelimit import unlimited
from bot.domain.clock import VirtualClock
from bot.runtime import telegram_for
from bot.sample import ensure_sample_fixture
from bot.settings import Settings
from bot.store import Store
from handlers import sweep_escalations
from handlers.briefings.briefing_content import briefing_outbounds
from rigs.recording_sink import RecordingSink
from tests.conftest import START, Chat
from tests.ha.many_fixtures import (
    ADD_WOMEN,
    W_COMMAND_TG,
    W_CONTROL_TG,
    W_STEWARDS_TG,
    WOMEN,
    two_ground_config,
)

MEN_CONTROL_TG, MEN_COMMAND_TG = "-1001000000001", "-1001000000002"


class Recorder(RecordingSink):
    """A Telegram sink that records which chat got which message."""

    def __init__(self) -> None:
        super().__init__("telegram")

    def chats_with(self, needle: str) -> set[str]:
        return {c for c, r in self.got if needle in r.title + r.text}


@pytest_asyncio.fixture
async def two(store: Store, settings: Settings, clock: VirtualClock,
              tmp_path: Path) -> tuple[Core, Recorder, str]:
    core = build_core(store, settings, clock, config_dir=two_ground_config(tmp_path),
                      cache_ttl=0)
    men = (await ensure_sample_fixture(core)).id
    core.notifier.limiter = unlimited()
    rec = Recorder()
    core.notifier.add_sink(rec)
    for who, role in (("stw-w", "steward"), ("ctl-w", "control")):
        core.roster[f"console:{who}"] = Member("console", who, role, who)
    r = await Chat(core)(ADD_WOMEN, as_="admin")
    assert r.reply.ok and WOMEN in r.reply.text, r.reply.text
    return core, rec, men


async def test_each_person_reports_into_their_own_fixture(two):
    core, rec, men = two
    say = Chat(core)
    r = await say(f"/fixture use {WOMEN}", as_="stw-w")
    assert r.reply.ok and "Rush Green" in r.reply.text, r.reply.text
    w = await say("/incident missile @away_end s3 bottle", as_="stw-w")
    m = await say("/incident missile @stb_walkway s3 coins", as_="steward")
    assert w.reply.title.startswith("Logged INC-1") and m.reply.title.startswith("Logged INC-1")
    assert (await core.store.incident(WOMEN, 1)).location == "away_end"
    assert (await core.store.incident(men, 1)).location == "stb_walkway"
    await core.notifier.drain()
    # Each card reaches its own fixture's control room, never the other fixture's.
    women_card, men_card = rec.chats_with("Away End"), rec.chats_with("coins")
    assert W_CONTROL_TG in women_card and not {MEN_CONTROL_TG, MEN_COMMAND_TG} & women_card
    assert MEN_CONTROL_TG in men_card and not {W_CONTROL_TG, W_COMMAND_TG} & men_card


async def test_fixture_use_by_one_person_does_not_move_another(two):
    core, _rec, men = two
    say = Chat(core)
    assert (await say(f"/fixture use {WOMEN}", as_="ctl-w")).reply.ok
    mine = await say("/status", as_="ctl-w")
    theirs = await say("/status", as_="control")
    assert mine.reply.title == "Status · West Ham Women v Chelsea Women"
    assert theirs.reply.title == "Status · West Ham United v Chelsea"
    assert (await core.active_fixture()).id == men  # the deployment default is unchanged
    # A commander sees which fixtures are live; the one shown is marked.
    assert f"Live: ▶ West Ham United v Chelsea ({men}), West Ham Women v Chelsea Women " \
        f"({WOMEN})" in theirs.reply.text or f"▶ West Ham United v Chelsea ({men})" in \
        theirs.reply.text
    assert f"▶ West Ham Women v Chelsea Women ({WOMEN})" in mine.reply.text
    # Choosing for a whole chat or everyone is the admin's.
    r = await say(f"/fixture use {WOMEN} all", as_="ctl-w")
    assert not r.reply.ok and "admins" in r.reply.text
    assert (await core.active_fixture()).id == men


async def test_a_group_chat_can_be_set_to_a_fixture(two):
    core, _rec, men = two
    say = Chat(core)
    r = await core.handle(_in_group("admin", f"/fixture use {WOMEN} chat", "grp-w"))
    assert r.reply.ok and "This chat" in r.reply.text
    # In that group, the steward's report goes to the women's fixture…
    r = await core.handle(_in_group("steward", "/incident fight @main_stand s2", "grp-w"))
    assert r.reply.title.startswith("Logged INC-1"), r.reply.text
    assert await core.store.incident(WOMEN, 1) is not None
    # …and in a private chat to theirs (the default).
    r = await say("/incident fight @stb_lower s2", as_="steward")
    assert await core.store.incident(men, 1) is not None


def _in_group(user: str, text: str, chat: str):
    from bot.domain.messages import Command

    return Command(platform="console", chat=chat, user=user, text=text,
                   dedupe_key=f"grp:{user}:{text}", private=False)


async def test_escalations_fire_per_fixture_into_its_chats(two, clock):
    core, rec, men = two
    say = Chat(core)
    await say(f"/fixture use {WOMEN}", as_="stw-w")
    await say("/incident missile @away_end s3", as_="stw-w")
    await say("/incident missile @stb_upper s3", as_="steward")
    outs = await sweep_escalations(core, core.store, START + timedelta(seconds=120))
    # Severity 3's first tier (2 min) goes to command: each fixture's own command chat.
    assert sorted(o.fixture for o in outs if o.audience == "command") == sorted([men, WOMEN])
    await core.notifier.drain()
    esc = {(c, "Away End" in r.text, "Sir Trevor Brooking" in r.text) for c, r in rec.got
           if "unacknowledged" in r.title}  # each fixture's incident, at its own ground
    assert esc == {(W_COMMAND_TG, True, False), (MEN_COMMAND_TG, False, True)}
    # once each
    assert await sweep_escalations(core, core.store, START + timedelta(seconds=121)) == []


async def test_briefings_go_to_each_fixtures_own_chats(two):
    core, rec, men = two
    women = await core.store.fixture(WOMEN)
    outs = await briefing_outbounds(core, core.store, women, "T-24h")
    await core.notifier.send(outs)
    await core.notifier.drain()
    got = rec.chats_with("Women")
    assert W_COMMAND_TG in got and W_STEWARDS_TG in got  # fixture's command, ground's stewards
    assert MEN_COMMAND_TG not in got
    # Its command chat's readers may read intelligence: the full version goes there.
    full = [o for c, o in rec.got if c == W_COMMAND_TG]
    assert full and "stewards" not in full[0].title


async def test_the_escalation_index_shrinks_when_a_fixture_has_nothing_left(two):
    core, _rec, men = two
    say = Chat(core)
    await say(f"/fixture use {WOMEN}", as_="stw-w")
    await say("/incident missile @away_end s3", as_="stw-w")
    await say("/incident missile @stb_upper s3", as_="steward")
    listed = await core.store.gateway.r.smembers(core.facades.deadlines.esc_index)
    assert {men, WOMEN} <= set(listed)
    await say(f"/fixture use {WOMEN}", as_="ctl-w")
    assert (await say("/resolve 1 all clear", as_="ctl-w")).reply.ok
    await sweep_escalations(core, core.store, START + timedelta(seconds=30))
    listed = await core.store.gateway.r.smembers(core.facades.deadlines.esc_index)
    assert WOMEN not in listed and men in listed
    # A new report lists it again (another replica may have retired it meanwhile).
    core.facades.deadlines._esc_indexed.clear()
    await say("/incident fight @main_stand s3", as_="stw-w")
    assert WOMEN in await core.store.gateway.r.smembers(core.facades.deadlines.esc_index)


async def test_through_telegram_two_stewards_cards_land_in_their_fixtures_chats(
        store, settings, clock, tmp_path):
    from pydantic import SecretStr

    from rigs.fakes.telegram_api import TOKEN, FakeTelegram

    core = build_core(store, settings, clock, config_dir=two_ground_config(tmp_path),
                      cache_ttl=0)
    await ensure_sample_fixture(core)
    assert (await Chat(core)(ADD_WOMEN, as_="admin")).reply.ok
    core.roster["telegram:100000002"] = Member("telegram", "100000002", "steward", "Stw W")
    fake = FakeTelegram(enforce_limits=True)
    await fake.start()
    s = settings.model_copy(update={"telegram_bot_token": SecretStr(TOKEN),
                                    "telegram_base_url": fake.base_url})
    tg = telegram_for(core, s, poll_timeout=1)
    await tg.start()
    try:
        await fake.push(fake.message_update(100000002, f"/fixture use {WOMEN}"))
        await fake.wait_for(lambda calls: [c for c in calls if c.method == "sendMessage"
                                           and "Rush Green" in str(c.params.get("text"))])
        await fake.push(fake.message_update(100000002, "/incident missile @away_end s3 cup"))
        await fake.push(fake.message_update(100000001, "/incident missile @stb_walkway s3 x"))

        def cards(calls):
            return {(str(c.params["chat_id"]), "Away End" in str(c.params.get("text")))
                    for c in calls if c.ok and c.method == "sendMessage"
                    and str(c.params["chat_id"]).startswith("-100")
                    and "INC-1" in str(c.params.get("text"))}

        def both_arrived(calls):
            got = cards(calls)
            return got if {(W_CONTROL_TG, True), (MEN_CONTROL_TG, False)} <= got else None

        got = await fake.wait_for(both_arrived, timeout=15)
        # The women's card only in Rush Green's chats, the men's only in the stadium's.
        assert {c for c, women in got if women} <= {W_CONTROL_TG, W_COMMAND_TG}
        assert not {c for c, women in got if not women} & {W_CONTROL_TG, W_COMMAND_TG}
        assert fake.too_many == 0
    finally:
        await tg.stop()
        await fake.stop()
