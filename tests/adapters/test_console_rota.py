"""The console as control uses it for the rota (issue 36 §15): a rota pasted after
`/deploy import` is imported, `/deploy page 2` is paging (not a deployment), page 2 comes
after page 1, and every /deploy line gets an answer."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bot.runtime import console_for
from bot.settings import Settings, load_settings
from tests.support.many_posts import config_with_posts


@pytest.fixture
def settings(redis_url: str, tmp_path: Path) -> Settings:
    """The tests' settings over a config giving the sample fixture 150 mobile posts."""
    return load_settings(REDIS_URL=redis_url, MATCHDAY_DATA_DIR=str(tmp_path / "data"),
                         MATCHDAY_CONFIG_DIR=str(config_with_posts(tmp_path, 150)))


async def test_a_rota_is_pasted_and_the_plan_comes_in_pages_in_order(core) -> None:
    out = io.StringIO()
    console = console_for(core, "control", stdout=out)
    rota = ["steward id,name,post", *[f"{n},Steward {n},stb_mobile_1_{n}" for n in
                                      range(2, 62)]]
    for line in ["/deploy import", *rota, ""]:
        await console.say(line)
    assert "Deployed 60 stewards from the rota." in out.getvalue(), out.getvalue()[-500:]
    fx = await core.active_fixture()
    filled, _ = await core.facades.stewarding.deployment(fx.id)
    assert len(filled) == 60
    mark = out.tell()
    await console.say("/deploy")
    first = out.getvalue()[mark:]
    assert "(page 1 of" in first and "more: /deploy page 2" in first, first[-300:]
    mark = out.tell()
    await console.say("/deploy page 2")
    second = out.getvalue()[mark:]
    assert "(page 2 of" in second and "not a steward id" not in second, second[:300]
    assert len((await core.facades.stewarding.deployment(fx.id))[0]) == 60  # nothing deployed
    mark = out.tell()
    await console.say("/deploy 62 stb_mobile_1_62 Steward 62")
    assert "Deployed Steward 62 [62]" in out.getvalue()[mark:]

