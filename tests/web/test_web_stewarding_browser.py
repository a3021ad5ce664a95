"""The stewarding plan and the acknowledgements on the control-room screen, in Chromium and
Firefox against the bot's own server (issue 24 §1 and §4): each zone of the map is outlined
by how its posts are filled and labelled "1/2 posts" (readable without colour), and who has
the latest broadcast, and who not yet, updates live over the change stream as stewards tap
"I have it"."""

from __future__ import annotations

import json

import pytest

from tests.web.browser_screen import LIVE, body_data, has

pytestmark = pytest.mark.browser


def zone_class(zone: str) -> str:
    """The class of a zone's outline on the map."""
    return (f"document.querySelector('svg.ground .zone[data-zone={json.dumps(zone)}]')"
            ".getAttribute('class')")


async def test_posts_on_the_map_and_acknowledgements_update_live(screen, say) -> None:
    await screen.sign_in(say, "control")
    await screen.until(body_data("ready"), 5)
    await screen.until(LIVE, 5)
    # no rota yet: every zone with posts is red, its label says so without colour
    assert "posts-red" in await screen.js(zone_class("stb_upper"))
    await screen.until(has('#posts text[data-zone="stb_upper"]', "0/2 posts"), 2)
    await screen.until(has(".tile.posts-tile", "0/8"), 2)

    await say("/deploy 311 stb_250_gangway A. Steward", as_="control")
    await screen.until(has('#posts text[data-zone="stb_upper"]', "1/2 posts"), 3)
    await screen.until(f"{zone_class('stb_upper')}.includes('posts-amber')", 3)
    await screen.until(has(".tile.posts-tile", "1/8"), 3)

    sent = await say("/broadcast stb keep the gangways clear", as_="control")
    bid = sent.reply.title.split()[-1]
    await screen.until(has("#acks", "0/3 have it"), 3)  # the rota's 311 counts
    acks = await screen.text("#acks")
    assert "Steward 14 (STB upper)" in acks and "Supervisor North" in acks
    await screen.shot("control-room-acks-0")

    await say(f"/ihaveit {bid}", as_="steward")
    await screen.until(has("#acks", "1/3 have it"), 3)
    assert "Steward 14" not in (await screen.text("#acks")).split("not yet:")[1]
    await say(f"/ihaveit {bid}", as_="supervisor")
    await screen.until(has("#acks", "2/3 have it"), 3)
    acks = await screen.text("#acks")
    assert "not yet" not in acks and "311 A. Steward (Block 250 gangway)" in acks
    await screen.shot("control-room-acks-2")
