"""The stewarding plan and the acknowledgements on the control-room screen, in headless
Chromium against the bot's own server (issue 24 §1 and §4): each zone of the map is outlined
by how its posts are filled and labelled "1/2 posts" (readable without colour), and who has
the latest broadcast, and who not yet, updates live over the change stream as stewards tap
"I have it"."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from tests.web.test_web_browser import browser, has, screen  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser


def zone_class(zone: str):  # type: ignore[no-untyped-def]
    def get(d) -> str:  # type: ignore[no-untyped-def]
        return d.find_element(By.CSS_SELECTOR, f'svg.ground .zone[data-zone="{zone}"]'
                              ).get_attribute("class")
    return get


async def test_posts_on_the_map_and_acknowledgements_update_live(screen, say  # noqa: F811
                                                                 ) -> None:
    await screen.sign_in(say, "control")
    await screen.wait(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"),
                      5)
    await screen.wait(lambda d: "on" in d.find_element(By.ID, "live").get_attribute("class"), 5)
    # no rota yet: every zone with posts is red, its label says so without colour
    assert "posts-red" in await screen.run(zone_class("stb_upper"), screen.driver)
    await screen.wait(has('#posts text[data-zone="stb_upper"]', "0/2 posts"), 2)
    await screen.wait(has(".tile.posts-tile", "0/8"), 2)

    await say("/deploy 311 stb_250_gangway A. Steward", as_="control")
    await screen.wait(has('#posts text[data-zone="stb_upper"]', "1/2 posts"), 3)
    await screen.wait(lambda d: "posts-amber" in zone_class("stb_upper")(d), 3)
    await screen.wait(has(".tile.posts-tile", "1/8"), 3)

    sent = await say("/broadcast stb keep the gangways clear", as_="control")
    bid = sent.reply.title.split()[-1]
    await screen.wait(has("#acks", "0/2 have it"), 3)
    acks = await screen.text("#acks")
    assert "Steward 14 (STB upper)" in acks and "Supervisor North" in acks
    await screen.shot("control-room-acks-0")

    await say(f"/ihaveit {bid}", as_="steward")
    await screen.wait(has("#acks", "1/2 have it"), 3)
    assert "Steward 14" not in (await screen.text("#acks")).split("not yet:")[1]
    await say(f"/ihaveit {bid}", as_="supervisor")
    await screen.wait(has("#acks", "everyone has it"), 3)
    await screen.shot("control-room-acks-2")
