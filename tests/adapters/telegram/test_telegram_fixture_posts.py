"""A fixture's own posts (issue 24 §1), through python-telegram-bot against the fake Bot API:
the ground's file overrides the sample fixture's posts (`[fixtures."<id>"]`: a post dropped, a
post made three, a post's kind changed, a post added); /deploy, the rota import and /status
use the fixture's posts, and another fixture at the same ground keeps the ground's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from bot.core.roles import Member
from bot.settings import Settings, load_settings
from rigs.fakes.telegram_api import FakeTelegram
from tests.adapters.telegram.test_telegram_adapter import (  # noqa: F401 (fixtures)
    fake,
    polling,
)
from tests.adapters.telegram.test_telegram_deploy import ask_as
from tests.test_cli import ROOT

SO = 300000001
SAMPLE = "sample-westham-chelsea-20261125"  # ensure_sample_fixture's id on the tests' START
OVERRIDE = f"""
[fixtures."{SAMPLE}"]
drop = ["gate_b_lane_2"]

[[fixtures."{SAMPLE}".post]]
id = "stb_mobile_1"
count = 3

[[fixtures."{SAMPLE}".post]]
id = "gate_a_fire"
kind = "static"
name = "Gate A steward"
qualification = false

[[fixtures."{SAMPLE}".post]]
id = "bms_230_gangway"
zone = "bms_upper"
name = "Block 230 gangway"
"""
# the ground's 8 posts, less gate_b_lane_2, with stb_mobile_1 three times and one new: 10


def config_with_override(tmp_path: Path) -> Path:
    """A copy of the project's config whose ground file overrides the sample fixture's posts."""
    cfg = tmp_path / "config"
    shutil.copytree(ROOT / "config", cfg)
    ground = cfg / "grounds" / "london_stadium.toml"
    ground.write_text(ground.read_text() + OVERRIDE)
    return cfg


@pytest.fixture
def settings(redis_url: str, tmp_path: Path) -> Settings:
    """The tests' settings over the config with the sample fixture's own posts."""
    return load_settings(REDIS_URL=redis_url, MATCHDAY_DATA_DIR=str(tmp_path / "data"),
                         MATCHDAY_CONFIG_DIR=str(config_with_override(tmp_path)))


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
