# ruff: noqa: F811  (pytest fixtures imported from test_slack_adapter)
"""The stewarding plan per zone on the Slack Home tab (issue 24 §1) through slack-bolt against
the fake Web API: control opens the tab and sees every zone's planned vs filled posts, worst
first and readable without colour ("🔴 SHORT STB upper 250-262: 0/2 posts"), mobile posts
against the fixture's attendance/250; a /md-deploy republishes it with the zone filled in."""

from __future__ import annotations

from tests.support.slack import (  # noqa: F401
    CONTROL,
    fake,
    slack,
    slash,
)
from tests.support.slack_home import (  # noqa: F401 (fixtures)
    home_text,
    open_home,
)


async def test_control_sees_planned_vs_filled_per_zone_on_the_home_tab(slack, fake, core):
    await open_home(slack, CONTROL, "Ev0POSTS1")
    [first] = await fake.wait_call("views.publish")
    text = home_text(first)
    assert "Posts by zone" in text and "Posts: 0/8 filled" in text
    assert ("🔴 SHORT STB upper 250-262: 0/2 posts · unfilled: Block 250 gangway, "
            "Block 256 gangway") in text
    assert "· mobile 0/1" in text  # the STB mobile post
    # the fixture's expected attendance (62,500) calls for 250 mobile stewards
    assert "⚠ MOBILE 0 of 250 needed for 62,500 expected (plan has 1 post)" in text

    await slash(slack, fake, "/md-deploy", "311 stb_250_gangway A. Steward")
    calls = await fake.wait_call("views.publish", count=2)
    text = home_text(calls[-1])
    assert "🟠 GAPS STB upper 250-262: 1/2 posts · unfilled: Block 256 gangway" in text
    assert text.index("🔴 SHORT") < text.index("🟠 GAPS")  # worst first
