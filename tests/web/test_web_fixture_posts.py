"""A fixture's own posts (issue 24 §1) on the control-room map, over HTTP: the ground's file
overrides the sample fixture's posts, and the map's zones and the posts tile count those (a
post added in the BMS upper tier outlined red until it is filled, a post dropped, a post made
three)."""

from __future__ import annotations

from tests.support.fixture_posts import (  # noqa: F401
    settings,
)
from tests.support.web_session import (
    sign_in,
    state_of,
)


async def test_the_map_outlines_the_fixture_s_own_posts(client, say) -> None:
    await sign_in(client, say, "control")
    plan = state_of(await (await client.get("/control/")).text())["stewarding"]
    assert plan["posts"]["planned"] == 10 and plan["posts"]["mobile_planned"] == 3
    bms = plan["zones"]["bms_upper"]
    assert (bms["label"], bms["level"], bms["unfilled"]) == ("0/1 post", "red",
                                                            ["Block 230 gangway"])
    assert "Gate B search lane 2" not in plan["zones"]["gate_away"]["unfilled"]
    assert plan["zones"]["gate_away"]["label"] == "0/1 post"

    await say("/deploy 62 bms_230_gangway Gangway 62", as_="control")
    plan = state_of(await (await client.get("/control/")).text())["stewarding"]
    assert (plan["zones"]["bms_upper"]["level"], plan["posts"]["filled"]) == ("ok", 1)
