# ruff: noqa: F811  (pytest fixtures imported from test_slack_adapter)
"""A fixture's own posts (issue 24 §1) on the Slack Home tab, through slack-bolt against the fake
Web API: the ground's file overrides the sample fixture's posts and the tab counts those (a
post added in the BMS upper tier, a post made three, a post dropped)."""

from __future__ import annotations

from tests.support.fixture_posts import (  # noqa: F401
    settings,
)
from tests.support.slack import (  # noqa: F401
    CONTROL,
    fake,
    slack,
    slash,
)
from tests.support.slack_home import (
    home_text,
    open_home,
)


async def test_the_home_tab_counts_the_fixture_s_own_posts(slack, fake, core):
    await open_home(slack, CONTROL, "Ev0FXPOSTS1")
    [first] = await fake.wait_call("views.publish")
    text = home_text(first)
    assert "Posts: 0/10 filled" in text
    assert "🔴 SHORT BMS upper 230-240: 0/1 post · unfilled: Block 230 gangway" in text
    assert "· mobile 0/3" in text and "Gate B search lane 2" not in text
    assert "⚠ MOBILE 0 of 250 needed for 62,500 expected (plan has 3 posts)" in text

    await slash(slack, fake, "/md-deploy", "62 bms_230_gangway Gangway 62")
    calls = await fake.wait_call("views.publish", count=2)
    text = home_text(calls[-1])
    assert "✓ OK BMS upper 230-240: 1/1 post" in text and "Posts: 1/10 filled" in text
