"""The control room as the wall screen at a flashpoint (issue #23), in headless Chromium:
worst first with nothing below the fold, a dead screen that says so, and a banner for what
must be acknowledged now.

Marked `browser`: run with `python -m pytest -m browser`. Screenshots go to test-artifacts/
(or $MATCHDAY_TEST_ARTIFACTS); MATCHDAY_DOCS_SHOTS=1 also writes the ones in docs/.
"""

from __future__ import annotations

import os
from datetime import timedelta

import pytest
from selenium.webdriver.common.by import By

from bot.core.dispatch import Core
from tests.botproc import TYPES, ZONES
from tests.web import test_web_browser as chromium
from tests.web.test_web_browser import ROOT, Screen

browser, screen = chromium.browser, chromium.screen  # the Chromium fixtures

pytestmark = pytest.mark.browser
DOCS = ROOT / "docs"
SIZES = [(1920, 1080), (1366, 768)]


def flashpoint_text(k: int) -> str:
    """The k-th report of a flashpoint replay (bench/flashpoint.py's mix: mostly S2/S3, every
    ninth S4, one S5 segregation breach)."""
    sev = 5 if k == 150 else 4 if k % 9 == 0 else 2 + k % 2
    kind = "segregation_breach" if sev == 5 else TYPES[k % len(TYPES)]
    zone = "seg_ne" if sev == 5 else ZONES[(k // len(TYPES) * 7 + k) % len(ZONES)]
    return f"/incident {kind} @{zone} s{sev} fans in block {k} throwing coins at stewards"


async def flashpoint(say, clock, n: int = 200) -> None:
    """n distinct open incidents in about a minute of the virtual clock."""
    for k in range(1, n + 1):
        result = await say(flashpoint_text(k), as_="steward", dedupe=f"flash:{k}")
        assert result is not None and result.reply.ok, result
        if not result.reply.title.startswith("Logged"):  # joined a nearby one: its own
            split = next(b.command for row in result.reply.buttons for b in row
                         if b.command.endswith(" new"))
            assert (await say(split, as_="steward")).reply.ok
        clock.advance(timedelta(milliseconds=300))


VISIBLE = """
const vh = innerHeight, vw = innerWidth;
const seen = (el) => { const r = el.getBoundingClientRect();
  return r.top >= 0 && r.left >= 0 && r.bottom <= vh + 0.5 && r.right <= vw + 0.5 &&
         r.height > 0 && r.width > 0; };
const col = document.querySelector('.col[data-status="reported"]');
const cards = [...col.querySelectorAll('li.card')];
return {shown: cards.filter(seen).map((c) => c.dataset.id),
        sev: cards.map((c) => Number(c.dataset.sev)),
        more: (col.querySelector('li.more') || {}).textContent || '',
        scroll: [...document.querySelectorAll('.col, .col ol')]
          .some((e) => e.scrollHeight > e.clientHeight + 1),
        page: document.documentElement.scrollHeight <= vh + 1 &&
              document.documentElement.scrollWidth <= vw + 1};
"""


async def resize(s: Screen, width: int, height: int) -> None:
    await s.run(s.driver.execute_cdp_cmd, "Emulation.setDeviceMetricsOverride",
                     {"width": width, "height": height, "deviceScaleFactor": 1,
                      "mobile": False})


async def complete(s: Screen) -> None:
    await s.wait(lambda d: d.find_element(By.TAG_NAME, "body")
                      .get_attribute("data-complete"), 10)


@pytest.mark.parametrize("size", SIZES, ids=["1920x1080", "1366x768"])
async def test_every_unacknowledged_s4_s5_is_on_screen_at_a_flashpoint(screen, say, clock,
                                                                        core: Core,
                                                                        size) -> None:
    await flashpoint(say, clock)
    fx = await core.active_fixture()
    rows, _ = await core.store.open_incidents(fx.id, limit=1000)
    unacked = {i.id: i.severity for i in rows if i.status == "reported"}
    assert len(unacked) == 200
    urgent = {i for i, s in unacked.items() if s >= 4}
    assert len(urgent) >= 20  # a real flashpoint's load, not a token one
    await resize(screen, *size)
    try:
        await screen.sign_in(say, "control")
        await complete(screen)
        got = await screen.run(screen.driver.execute_script, VISIBLE)
        path = await screen.shot(f"wall-flashpoint-{size[0]}x{size[1]}")
        assert urgent <= set(got["shown"]), (urgent - set(got["shown"]), got["more"])
        assert got["sev"] == sorted(got["sev"], reverse=True)  # worst first
        assert not got["scroll"] and got["page"], got  # nothing to scroll on a wall
        hidden = 200 - len(got["shown"])
        lowest = max(s for i, s in unacked.items() if i not in got["shown"])
        assert got["more"] == f"+{hidden} more (lowest severity S{lowest})", got["more"]
        if os.environ.get("MATCHDAY_DOCS_SHOTS"):
            (DOCS / path.name).write_bytes(path.read_bytes())
    finally:
        await screen.run(screen.driver.execute_cdp_cmd,
                         "Emulation.clearDeviceMetricsOverride", {})
