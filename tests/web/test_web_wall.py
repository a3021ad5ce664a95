"""The control room as the wall screen at a flashpoint (issue #23), in Chromium and Firefox:
worst first with nothing below the fold, a dead screen that says so, and a banner for what
must be acknowledged now.

Marked `browser`: run with `python -m pytest -m browser`. Screenshots go to test-artifacts/
(or $MATCHDAY_TEST_ARTIFACTS); MATCHDAY_DOCS_SHOTS=1 also writes the ones in docs/.
"""

from __future__ import annotations

import os
from datetime import timedelta

import pytest

from bot.core.dispatch import Core
from bot.runtime import early_warning_for
from handlers import sweep_escalations
from rigs.wall_probe import CARDS_WHOLE
from tests.support.browser import (
    card_edited,
)
from tests.support.wall import flashpoint
from tests.web.browser_screen import LIVE, ROOT, Screen, body_data, has, shown
from tests.web.conftest import TG_CONTROL

pytestmark = pytest.mark.browser
DOCS = ROOT / "docs"
SIZES = [(1920, 1080), (1366, 768)]


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


async def complete(s: Screen) -> None:
    await s.until(body_data("complete"), 10)


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
    await screen.resize(*size)
    await screen.sign_in(say, "control")
    await complete(screen)
    got = await screen.run(VISIBLE)
    path = await screen.shot(f"wall-flashpoint-{size[0]}x{size[1]}")
    assert urgent <= set(got["shown"]), (urgent - set(got["shown"]), got["more"])
    assert got["sev"] == sorted(got["sev"], reverse=True)  # worst first
    assert not got["scroll"] and got["page"], got  # nothing to scroll on a wall
    whole = await screen.run(CARDS_WHOLE)  # id, severity and place never cut (#37)
    assert whole["cut"] == [], whole
    hidden = 200 - len(got["shown"])
    worst = max(s for i, s in unacked.items() if i not in got["shown"])
    assert got["more"] == f"+{hidden} more · worst S{worst}", got["more"]
    if os.environ.get("MATCHDAY_DOCS_SHOTS") and screen.name == "chromium":
        (DOCS / path.name).write_bytes(path.read_bytes())


# ---------------------------------------------------------------- item 2: never silently stale
STALE = "document.body.classList.contains('stale')"


async def test_a_dead_screen_says_not_live_stops_counting_and_recovers(screen, restartable,
                                                                       say) -> None:
    s = screen
    s.base = restartable.base  # a server this test can stop
    await s.sign_in(say, "control")
    await complete(s)
    await s.until(LIVE, 5)
    await say("/incident pyro @away_upper s3 flare lit", as_="steward")
    await s.until(has('.col[data-status="reported"] .card', "INC-1"), 5)
    assert not await s.js(shown("#notlive"))

    await restartable.stop()  # the server dies
    await s.until(shown("#notlive"), 5)
    assert "NOT LIVE since" in await s.text("#notlive")
    assert await s.js(STALE)
    frozen = await s.run(FROZEN)
    ticks = int(frozen["ticks"])
    # two more ticks of the screen's one-second counter: nothing it shows moved
    await s.until(f"Number({body_data('ticks')} || 0) >= {ticks + 2}", 5)
    assert await s.run(FROZEN) | {"ticks": 0} == frozen | {"ticks": 0}
    path = await s.shot("wall-not-live")
    if os.environ.get("MATCHDAY_DOCS_SHOTS") and s.name == "chromium":
        (DOCS / path.name).write_bytes(path.read_bytes())

    await say("/incident disorder @seg_ne s5 fighting on the line", as_="steward")
    await restartable.start()  # back: the screen resumes after the last id it had
    await s.until(f"!({shown('#notlive')})", 10)
    await s.until(has('.col[data-status="reported"] .card', "INC-2"), 5)
    await s.until(has("#log li", "INC-2 reported"), 5)
    assert not await s.js(STALE)


FROZEN = """
return {ticks: document.body.dataset.ticks || '0',
        clock: document.getElementById('clock').textContent,
        ages: [...document.querySelectorAll('.age')].map((e) => e.textContent).join(',')};
"""


# ---------------------------------------------------------------- item 3: what must be acked now
async def test_a_new_s5_raises_a_banner_until_acknowledged_from_it(screen, say, core, clock,
                                                                    telegram) -> None:
    await screen.sign_in(say, "control")
    await complete(screen)
    await screen.until(LIVE, 5)
    assert await screen.js("document.getElementById('sound').getAttribute('aria-pressed')") \
        == "false"  # off by default
    await screen.click("#sound")
    await say("/incident pyro @away_upper s3 flare lit", as_="steward")
    await screen.until(has('.col[data-status="reported"] .card', "INC-1"), 5)
    assert not await screen.js(shown("#alerts .alert[data-id]"))  # an S3 is not an alarm
    await say("/incident segregation_breach @seg_ne s5 fans through the line", as_="steward")
    await screen.until(has("#alerts .alert.sev5", "INC-2"), 3)
    assert "Not acknowledged" in await screen.text("#alerts .alert.sev5")
    assert await screen.js(body_data("beeps")) == "1"  # sound was switched on
    # an unacknowledged S3 that escalates on its timer raises one too
    await sweep_escalations(core, core.store, clock.now() + timedelta(minutes=10))
    await screen.until(has("#alerts .alert", "Escalated"), 5)
    # where each card's chat message is (item 9), from the delivered marks
    await screen.until(has('.card[data-id="INC-2"] .dlv', "delivered"), 5)
    assert "(Telegram)" in await screen.text('.card[data-id="INC-2"] .dlv')
    path = await screen.shot("wall-alert")
    if os.environ.get("MATCHDAY_DOCS_SHOTS") and screen.name == "chromium":
        (DOCS / path.name).write_bytes(path.read_bytes())
    await screen.click('#alerts button.act-ack[data-incident="INC-2"]')
    await telegram.wait_for(card_edited(TG_CONTROL, "Acknowledged"))
    await screen.until(has('.col[data-status="acknowledged"] .card', "INC-2"), 5)
    await screen.until(f"!({has('#alerts .alert', 'INC-2')})", 5)
    assert "INC-1" in await screen.text("#alerts")  # stays until acknowledged itself


# ---------------------------------------------------------------- item 5: a map that reads
PINS = """
const boxes = [...document.querySelectorAll('#pins .pin')].map((p) => {
  const r = p.querySelector('polygon, rect, circle').getBoundingClientRect();
  return {zone: p.dataset.zone, l: r.left, t: r.top, r: r.right, b: r.bottom}; });
const overlaps = [];
for (let a = 0; a < boxes.length; a++) for (let b = a + 1; b < boxes.length; b++) {
  const p = boxes[a], q = boxes[b];
  // the shapes' own extents, less a little for a diamond's corners
  if (Math.min(p.r, q.r) - Math.max(p.l, q.l) > 4 && Math.min(p.b, q.b) - Math.max(p.t, q.t) > 4)
    overlaps.push(p.zone + '/' + q.zone); }
const heat = {};
for (const z of document.querySelectorAll('svg.ground .zone[data-zone]'))
  heat[z.dataset.zone] = [...z.classList].filter((c) => c.startsWith('heat')).join('');
return {n: boxes.length, overlaps, heat};
"""


async def test_pins_do_not_cover_each_other_and_busy_zones_warm(screen, say, clock,
                                                                 core) -> None:
    warnings = early_warning_for(core)
    await warnings.sweep()  # follows the log from now
    # neighbouring places in the north-east corner, where the seed night's trouble was
    for text in ("missile @seg_ne s4 coins", "missile @away_upper s4 coins back",
                 "pyro @stb_upper s3 flare", "disorder @stb_walkway s4 fighting",
                 "crowd_density @gate_away s2 queue", "missile @seg_ne s4 bottles"):
        result = await say(f"/incident {text}", as_="steward")
        clock.advance(timedelta(seconds=20))
        if not result.reply.title.startswith("Logged"):  # joined: still a report
            continue
    warned, *_ = await warnings.sweep()  # item 10: the area heating up
    await screen.sign_in(say, "control")
    await complete(screen)
    got = await screen.run(PINS)
    await screen.until(has("#log li.k-fixture-early_warning", "Early warning — "), 5)
    pulsing = await screen.js("[...document.querySelectorAll('svg.ground .zone.warn')]"
                              ".map((z) => z.dataset.zone)")
    assert warned.zone in pulsing and set(warned.zones) <= set(pulsing), pulsing
    assert got["n"] >= 4 and got["overlaps"] == [], got
    assert got["heat"]["seg_ne"] == "heat2" and got["heat"]["gate_away"] == "heat1", got["heat"]
    assert got["heat"]["ws_lower"] == ""  # a quiet zone stays as it is
    path = await screen.shot("wall-map")
    if os.environ.get("MATCHDAY_DOCS_SHOTS") and screen.name == "chromium":
        (DOCS / path.name).write_bytes(path.read_bytes())
