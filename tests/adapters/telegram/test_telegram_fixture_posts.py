"""A fixture's own posts (issue 24 §1), through python-telegram-bot against the fake Bot API:
the ground's file overrides the sample fixture's posts (`[fixtures."<id>"]`: a post dropped, a
post made three, a post's kind changed, a post added); /deploy, the rota import and /status
use the fixture's posts, and another fixture at the same ground keeps the ground's."""

from __future__ import annotations

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from bot.core.roles import Member
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.deploy_chat import (
    ask_as,
)
from tests.support.fixture_posts import (  # noqa: F401 (fixtures)
    SAMPLE,
    settings,
)
from tests.support.telegram import (  # noqa: F401 (fixtures)
    fake,
    polling,
)

SO = 300000001
# the ground's 8 posts, less gate_b_lane_2, with stb_mobile_1 three times and one new: 10


async def test_the_fixture_s_own_posts_are_deployed_and_counted(
        core: Core, fake: FakeTelegram, polling: TelegramAdapter) -> None:  # noqa: F811
    assert (await core.active_fixture()).id == SAMPLE  # type: ignore[union-attr]
    core.roster[f"telegram:{SO}"] = Member("telegram", str(SO), "admin", "SO")
    plan = await ask_as(fake, SO, "/deploy", "Posts: 0/10 filled")
    assert "✗ UNFILLED STB mobile 1 (3) (mobile)" in plan
    assert "✗ UNFILLED Gate A steward (static)\n" in plan  # was a qualified fire point
    assert "✗ UNFILLED Block 105 vomitory (static)" in plan  # the ground's, unchanged
    assert "Block 230 gangway" in plan and "Gate B search lane 2" not in plan

    await ask_as(fake, SO, "/deploy 51 gate_b_lane_2 Dropped", "No post 'gate_b_lane_2'")
    await ask_as(fake, SO, "/deploy import\nsteward id,name,post\n61,Mobile 61,stb_mobile_1_2\n"
                           "62,Gangway 62,bms_230_gangway\n", "Deployed 2 stewards")
    status = await ask_as(fake, SO, "/status", "Posts: 2/10 filled")
    assert "⚠ MOBILE 1 of 250 needed for 62,500 expected (plan has 3 posts)" in status
    await ask_as(fake, SO, "/posts", "✓ OK BMS upper 230-240: 1/1 post")

    # another fixture at the same ground keeps the ground's own eight posts
    await ask_as(fake, SO, "/fixture add Leyton Orient v Barnet 2026-11-28 15:00", "Id: ")
    await ask_as(fake, SO, "/fixture use leytonorient-barnet-20261128", "now on")
    other = await ask_as(fake, SO, "/deploy", "Posts: 0/8 filled")
    assert "Gate B search lane 2" in other and "Block 230 gangway" not in other
