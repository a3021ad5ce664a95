"""Accessibility of the control-room pages for a control room (issue #23 item 11): axe-core
(vendored from npm, tests/web/vendor/axe-core) finds no serious or critical violation of
WCAG 2.2 A/AA on the live, post-match and sign-in pages, in Chromium and Firefox; severity is
readable without colour; every control is at least 44 px square and works from the keyboard.

Marked `browser`: run with `python -m pytest -m browser`. The last test runs the wall's items
1 and 2 in Firefox as well.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from rigs.net import free_port
from tests.web import test_web_browser as chromium
from tests.web.bidi import FIREFOX, Firefox, firefox
from tests.web.conftest import browser_binary
from tests.web.test_web_browser import LINK, Screen, has
from tests.web.test_web_wall import VISIBLE, Restartable, flashpoint

pytestmark = pytest.mark.browser
browser, screen = chromium.browser, chromium.screen  # the Chromium fixtures
AXE = (Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js").read_text()
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
RUN = ("return axe.run(document, {runOnly: {type: 'tag', values: TAGS}})"
       ".then((r) => JSON.stringify(r.violations.map((v) => ({id: v.id, impact: v.impact, "
       "nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ': ' + n.failureSummary)"
       "}))))").replace("TAGS", json.dumps(TAGS))
SMALL = """
return [...document.querySelectorAll('button, select, a[href], [role=button], li.card')]
  .filter((e) => e.getClientRects().length)
  .map((e) => { const r = e.getBoundingClientRect();
                return [e.id || e.className.baseVal || e.className || e.tagName,
                        Math.round(r.width), Math.round(r.height)]; })
  .filter(([, w, h]) => w < 44 || h < 44);
"""


def serious(violations: list[dict]) -> str:
    """The serious and critical violations, one line each ('' when none)."""
    return "\n".join(f"{v['impact']} {v['id']}: {v['nodes'][:1]}" for v in violations
                     if v["impact"] in ("serious", "critical"))


async def axe_chromium(s: Screen) -> list[dict]:
    await s.run(s.driver.execute_script, AXE)
    return json.loads(await s.run(s.driver.execute_script, RUN))


async def busy_night(say) -> None:
    for text in ("missile @seg_ne s4 x30 coins thrown both ways",
                 "segregation_breach @seg_ne s5 fans through the line",
                 "pyro @away_upper s3 flare lit", "medical @bms_lower s2 fan fainted"):
        await say(f"/incident {text}", as_="steward")
    await say("/ack 4")
    await say("/arrest violent_disorder x2 inside away inc=1", as_="police_liaison")


async def test_live_post_match_and_sign_in_pages_pass_axe_in_chromium(screen, say) -> None:
    await busy_night(say)
    result = await say("/web", as_="safety_officer")
    await screen.open(LINK.search(result.reply.text).group(1))
    await screen.wait(has("#signin", "Sign in"), 5)
    assert serious(await axe_chromium(screen)) == ""  # the sign-in page
    await screen.click("#signin")
    await screen.wait(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute(
        "data-complete"), 10)
    await screen.wait(has("#alerts .alert", "INC-2"), 5)
    assert serious(await axe_chromium(screen)) == ""  # the live page, banner and all
    assert await screen.run(screen.driver.execute_script, SMALL) == []
    # severity without colour: a number on every card and pin, a shape on S4/S5 pins
    labels = await screen.run(screen.driver.execute_script, """
      return {cards: [...document.querySelectorAll('li.card')].map((c) =>
                [c.dataset.sev, c.querySelector('.badge').textContent]),
              pins: [...document.querySelectorAll('#pins .pin')].map((p) =>
                [p.getAttribute('class'), p.querySelector('text.sevn').textContent,
                 p.querySelector('polygon, rect, circle').tagName])};""")
    assert labels["cards"] and all(badge == f"S{sev}" for sev, badge in labels["cards"])
    shapes = {"5": "polygon", "4": "rect"}
    for cls, number, shape in labels["pins"]:
        assert f"sev{number}" in cls.split() and shape == shapes.get(number, "circle"), cls
    await screen.open("/control/post-match")
    await screen.wait(has("h2", "Arrests and banning orders"), 5)
    assert serious(await axe_chromium(screen)) == ""


async def test_the_board_works_from_the_keyboard(screen, say) -> None:
    await say("/incident segregation_breach @seg_ne s5 fans through the line", as_="steward")
    await screen.sign_in(say, "control")
    await screen.wait(lambda d: "on" in d.find_element(By.ID, "live").get_attribute("class"), 5)
    # Tab reaches the card; Enter opens it with its buttons; Enter on Acknowledge acknowledges
    await screen.run(screen.driver.execute_script,
                     "document.activeElement && document.activeElement.blur()")
    for _ in range(60):
        focused = await screen.run(lambda: screen.driver.switch_to.active_element)
        if await screen.run(focused.get_attribute, "data-id") == "INC-1":
            break
        await screen.run(focused.send_keys, Keys.TAB)
    else:
        raise AssertionError("Tab never reached the card")
    await screen.run(focused.send_keys, Keys.ENTER)
    await screen.wait(has("#zone-panel h3", "INC-1"), 5)
    ack = await screen.run(screen.driver.find_element, By.CSS_SELECTOR,
                           '#zone-panel button.act-ack[data-incident="INC-1"]')
    await screen.run(ack.send_keys, Keys.ENTER)
    await screen.wait(has('.col[data-status="acknowledged"] .card', "INC-1"), 5)
    await screen.run(screen.driver.switch_to.active_element.send_keys, Keys.ESCAPE)
    await screen.wait(lambda d: not d.find_element(By.ID, "zone-panel").is_displayed(), 5)


@pytest_asyncio.fixture
async def ff(tmp_path: Path) -> AsyncIterator[Firefox]:
    binary = browser_binary(FIREFOX, "Firefox")
    async with firefox(binary, tmp_path / "profile") as b:
        yield b


async def test_the_live_page_passes_axe_in_firefox(ff, control_url, say) -> None:
    await busy_night(say)
    result = await say("/web", as_="control")
    await ff.navigate(control_url + LINK.search(result.reply.text).group(1))
    await ff.js("document.getElementById('signin').click()")
    await ff.until("location.pathname === '/control/' && !!document.body.dataset.complete", 20)
    await ff.js(AXE)
    found = json.loads(await ff.js(f"(() => {{ {RUN}; }})()"))
    assert serious(found) == ""
    assert json.loads(await ff.js(f"JSON.stringify((() => {{ {SMALL} }})())")) == []


async def test_firefox_wall_worst_first_and_not_live(tmp_path, say, clock, core) -> None:
    """Items 1 and 2 in Firefox: a flashpoint's S4/S5 all on screen at 1366x768 with the rest
    counted, and a dead server shown NOT LIVE, then recovered from the last id."""
    await flashpoint(say, clock, 120)
    server = Restartable(core, free_port())
    await server.start()
    binary = browser_binary(FIREFOX, "Firefox")
    try:
        async with firefox(binary, tmp_path / "profile", 1366, 768) as b:
            result = await say("/web", as_="control")
            await b.navigate(server.base + LINK.search(result.reply.text).group(1))
            await b.js("document.getElementById('signin').click()")
            await b.until("location.pathname === '/control/' && !!document.body.dataset"
                          ".complete && document.getElementById('live').classList"
                          ".contains('on')", 20)
            got = json.loads(await b.js(
                f"JSON.stringify((() => {{ {VISIBLE} }})())"))
            rows, _ = await core.store.open_incidents((await core.active_fixture()).id, 1000)
            urgent = {i.id for i in rows if i.severity >= 4 and i.status == "reported"}
            assert urgent <= set(got["shown"]) and got["more"].startswith("+"), got["more"]
            assert not got["scroll"] and got["page"]
            lines = await b.js("document.querySelectorAll('#log li').length")
            await server.stop()
            await b.until("!document.getElementById('notlive').hidden && "
                          "document.body.classList.contains('stale')", 5)
            await say("/incident disorder @seg_ne s5 fighting on the line", as_="steward")
            await server.start()
            await b.until("document.getElementById('notlive').hidden && "
                          f"document.querySelectorAll('#log li').length > {lines}", 15)
    finally:
        await server.stop()
