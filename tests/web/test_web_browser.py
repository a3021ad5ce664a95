"""The control-room screen in real browsers: headless Chromium (Selenium, chromedriver) and
Firefox (WebDriver BiDi), each test in both (tests/web/browser_screen.py), against the bot's
own server and the fake Bot API.

Marked `browser`: run with `python -m pytest -m browser` (.ci/run installs the browsers and
runs them); asked for on a machine without them, they fail with one line (they do not skip).
Screenshots and a printed PDF go to test-artifacts/ (or $MATCHDAY_TEST_ARTIFACTS).
"""

from __future__ import annotations

import os
from datetime import timedelta

import pypdfium2 as pdfium
import pytest

from tests.support.browser import (  # noqa: F401 (fixtures)
    card_edited,
)
from tests.web.browser_screen import ARTIFACTS, LINK, LIVE, ROOT, body_data, has
from tests.web.conftest import TG_CONTROL

pytestmark = pytest.mark.browser


async def test_report_shows_live_and_acknowledge_edits_the_chat_card(screen, say,
                                                                     telegram) -> None:
    await screen.sign_in(say, "control")
    await screen.until(body_data("ready"), 5)
    await screen.until(LIVE, 5)
    await say("/incident missile @seg_ne s4 coins thrown across the line", as_="steward")
    # on the map (a pulsing pin on the segregation line) and in the log, within 2 s
    await screen.until("!!document.querySelector('#pins .pin.pulse.sev4[data-zone=\"seg_ne\"]')",
                       2)
    await screen.until(has("#log li", "INC-1 reported: Throwing missiles"), 2)
    await screen.until(has('.col[data-status="reported"] .card.oldest', "INC-1"), 2)
    await telegram.wait_for(lambda calls: [c for c in calls if c.method == "sendMessage"
                                           and c.params.get("chat_id") == TG_CONTROL])
    await screen.until(has(".tile.delivery li", "Telegram control"), 2)  # delivery per chat
    await screen.shot("control-room-reported")
    await screen.click('button.act-ack[data-incident="INC-1"]')
    await telegram.wait_for(card_edited(TG_CONTROL, "Acknowledged"))
    await screen.until(has('.col[data-status="acknowledged"] .card', "INC-1"), 5)
    await screen.until("!document.querySelector('#pins .pin.pulse')", 5)
    await screen.click('#pins .pin[data-zone="seg_ne"]')
    await screen.until(has("#zone-panel li", "Acknowledged"), 5)
    await screen.shot("control-room-acknowledged")


async def test_viewer_sees_no_restricted_data(screen, say) -> None:
    await say("/incident missile @seg_ne s4 coins", as_="steward")
    await say("/arrest violent_disorder x2 inside away inc=1 ref=MPS/CU/1101",
              as_="police_liaison")
    await screen.sign_in(say, "viewer")
    await screen.until(has("#log li", "INC-1 reported"), 5)
    page = await screen.text()
    assert "Violent disorder" not in page and "MPS/CU" not in await screen.source()
    assert "Arrest" not in await screen.text("#log")
    assert not await screen.js("!!document.querySelector('button.act')")
    await screen.shot("control-room-viewer")


async def test_expired_link_is_refused(screen, say, core, clock) -> None:
    result = await say("/web", as_="control")
    clock.advance(timedelta(seconds=core.settings.web_link_ttl_seconds + 1))
    await screen.open(LINK.search(result.reply.text).group(1))
    await screen.click("#signin")
    await screen.until(has("h1", "Link not valid"), 5)
    await screen.open("/control/")
    await screen.until(has("h1", "Not signed in"), 5)


async def test_post_match_page_prints_on_a4(screen, say) -> None:
    await say("/incident missile @seg_ne s4 coins", as_="steward")
    await say("/incident disorder @stb_walkway s5 fighting", as_="steward")
    await say("/arrest violent_disorder x2 inside away inc=2", as_="police_liaison")
    await screen.sign_in(say, "safety_officer")
    await screen.until(has("#log li", "INC-2 reported"), 5)
    await screen.open("/control/post-match")
    await screen.until(has("h2", "Arrests and banning orders"), 5)
    assert "Violent disorder" in await screen.text()
    await screen.shot("post-match")
    pdf = await screen.print_a4()
    doc = pdfium.PdfDocument(pdf)  # Firefox writes its pages in compressed object streams
    pages = len(doc)
    assert pdf.startswith(b"%PDF") and 1 <= pages <= 2, pages  # 1-2 A4 pages (#23 item 8)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"post-match-{screen.name}.pdf").write_bytes(pdf)
    # the printed pages, as docs/ shows them
    if os.environ.get("MATCHDAY_DOCS_SHOTS") and screen.name == "chromium":
        for i in range(len(doc)):
            doc[i].render(scale=1.25).to_pil().save(ROOT / "docs" / f"post-match-print-{i + 1}.png")
    text = await screen.text()
    assert "Incidents, severity 5 to 1" in text and "Generated" in text
    assert "export chain head" in text


def charted(n: int) -> str:
    """A condition: the timeline chart shows n incidents (its bars' "<n> in <phase>")."""
    return ("[...document.querySelectorAll('#chart rect > title')]"
            f".reduce((n, t) => n + parseInt(t.textContent, 10), 0) === {n}")


async def test_the_chart_follows_reports_live(screen, say) -> None:
    await screen.sign_in(say, "control")
    await screen.until(has("#chart", "No incidents yet"), 5)
    await screen.until(LIVE, 5)
    await say("/incident missile @seg_ne s4 coins", as_="steward")
    # redrawn at most every 1.5 s (live.CHART_S): the deadline allows for one wait
    await screen.until(charted(1), 5)
    await say("/incident pyro @away_upper s3 flare", as_="steward")
    await screen.until(charted(2), 5)
    await screen.shot("control-room-chart")


BOXES = """
const box = (el) => { const r = el.getBoundingClientRect();
                      return {l: r.left, t: r.top, r: r.right, b: r.bottom}; };
return {map: box(document.querySelector('svg.ground')),
        section: box(document.querySelector('section.map')),
        panel: box(document.getElementById('zone-panel')),
        width: document.documentElement.scrollWidth, height: innerHeight};
"""


@pytest.mark.parametrize("size", [(1920, 1080), (1366, 768)], ids=["wall", "laptop"])
async def test_a_zones_incidents_open_below_the_map_not_over_it(screen, say, size) -> None:
    width, height = size
    await screen.resize(width, height)
    for text in ("missile @stb_walkway s4 coins", "pyro @stb_walkway s3 flare",
                 "disorder @bms_lower s5 fighting"):
        await say(f"/incident {text}", as_="steward")
    await screen.sign_in(say, "control")
    await screen.until(body_data("complete"), 5)
    await screen.click('#pins .pin[data-zone="stb_walkway"]')
    await screen.until(has("#zone-panel h3", "2 incidents"), 5)
    b = await screen.run(BOXES)
    m, p, s = b["map"], b["panel"], b["section"]
    overlap = min(m["r"], p["r"]) > max(m["l"], p["l"]) and \
        min(m["b"], p["b"]) > max(m["t"], p["t"])
    assert not overlap, b
    assert s["t"] <= p["t"] and p["b"] <= s["b"] + 1, b  # inside the map's panel
    assert m["b"] - m["t"] > (s["b"] - s["t"]) * 0.4, b  # the map stays big enough
    assert b["width"] <= width, b  # nothing runs off the side of the screen
    await screen.shot(f"control-room-zone-{width}x{height}")
