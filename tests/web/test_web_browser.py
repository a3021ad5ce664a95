"""The control-room screen in a real browser: headless Chromium from the system packages,
driven by Selenium through chromedriver, against the bot's own server and the fake Bot API.

Marked `browser`: run with `python -m pytest -m browser` (.ci/run installs Chromium and runs
them); asked for on a machine without Chromium, they fail with one line (they do not skip).
Screenshots and a printed PDF go to test-artifacts/ (or $MATCHDAY_TEST_ARTIFACTS).
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.print_page_options import PrintOptions
from selenium.webdriver.support.ui import WebDriverWait

from rigs.fakes.telegram_api import Call
from tests.conftest import Chat
from tests.web.conftest import TG_CONTROL, browser_binary

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.browser
ARTIFACTS = Path(os.environ.get("MATCHDAY_TEST_ARTIFACTS", ROOT / "test-artifacts"))
LINK = re.compile(r"https?://[^/\s]+(/control/login/[A-Za-z0-9_-]+)")


def _binary(names: tuple[str, ...]) -> str:
    return browser_binary(names, "Chromium and its driver")


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    """Headless Chromium at 1920x1080, the wall screen's size."""
    opts = webdriver.ChromeOptions()
    opts.binary_location = _binary(("chromium", "chromium-browser"))
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1920,1080", "--hide-scrollbars", "--force-device-scale-factor=1"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(_binary(("chromedriver",))),
                              options=opts)
    yield driver
    driver.quit()


class Screen:
    """The browser, driven from async tests (each call in a thread, the bot keeps serving)."""

    def __init__(self, driver: webdriver.Chrome, base: str) -> None:
        self.driver, self.base = driver, base

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    async def open(self, path: str) -> None:
        await self.run(self.driver.get, self.base + path)

    async def click(self, css: str) -> None:
        """Click an element (found again if the live screen redrew it meanwhile)."""
        def press(d: webdriver.Chrome) -> bool:
            d.find_element(By.CSS_SELECTOR, css).click()
            return True
        await self.wait(press, 5)

    async def wait(self, condition: Callable[[webdriver.Chrome], Any], seconds: float) -> Any:
        """Poll the DOM until the condition holds (fails after `seconds`). While the live
        view re-renders, ChromeDriver can also answer "Node with given id does not belong
        to the document" (an unknown error, not a stale element): polled again too."""
        return await self.run(lambda: WebDriverWait(
            self.driver, seconds, 0.05,
            ignored_exceptions=(StaleElementReferenceException, WebDriverException)
        ).until(condition))

    async def text(self, css: str = "body") -> str:
        return await self.run(lambda: self.driver.find_element(By.CSS_SELECTOR, css).text)

    async def source(self) -> str:
        return await self.run(lambda: self.driver.page_source)

    async def shot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        await self.run(self.driver.save_screenshot, str(path))
        return path

    async def sign_in(self, say: Chat, who: str) -> None:
        """Ask for /web in chat, open the link and press Sign in."""
        result = await say("/web", as_=who)
        await self.open(LINK.search(result.reply.text).group(1))
        await self.click("#signin")


@pytest_asyncio.fixture
async def screen(control_url: str, browser: webdriver.Chrome) -> AsyncIterator[Screen]:
    s = Screen(browser, control_url)
    yield s
    await s.run(browser.get, "about:blank")  # closes the page's event stream
    await s.run(browser.delete_all_cookies)


def card_edited(chat: int, needle: str) -> Callable[[list[Call]], list[Call]]:
    def pred(calls: list[Call]) -> list[Call]:
        return [c for c in calls if c.ok and c.method == "editMessageText"
                and c.params.get("chat_id") == chat and needle in str(c.params.get("text"))]
    return pred


def has(css: str, text: str = "") -> Callable[[webdriver.Chrome], bool]:
    def check(d: webdriver.Chrome) -> bool:
        return any(text in e.text for e in d.find_elements(By.CSS_SELECTOR, css))
    return check


async def test_report_shows_live_and_acknowledge_edits_the_chat_card(screen, say,
                                                                     telegram) -> None:
    await screen.sign_in(say, "control")
    await screen.wait(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"),
                      5)
    await screen.wait(lambda d: "on" in d.find_element(By.ID, "live").get_attribute("class"), 5)
    await say("/incident missile @seg_ne s4 coins thrown across the line", as_="steward")
    # on the map (a pulsing pin on the segregation line) and in the log, within 2 s
    await screen.wait(lambda d: d.find_elements(
        By.CSS_SELECTOR, '#pins .pin.pulse.sev4[data-zone="seg_ne"]'), 2)
    await screen.wait(has("#log li", "INC-1 reported: Throwing missiles"), 2)
    await screen.wait(has('.col[data-status="reported"] .card.oldest', "INC-1"), 2)
    await telegram.wait_for(lambda calls: [c for c in calls if c.method == "sendMessage"
                                           and c.params.get("chat_id") == TG_CONTROL])
    await screen.wait(has(".tile.delivery li", "Telegram control"), 2)  # delivery per chat
    await screen.shot("control-room-reported")
    await screen.click('button.act-ack[data-incident="INC-1"]')
    await telegram.wait_for(card_edited(TG_CONTROL, "Acknowledged"))
    await screen.wait(has('.col[data-status="acknowledged"] .card', "INC-1"), 5)
    await screen.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, "#pins .pin.pulse"), 5)
    await screen.click('#pins .pin[data-zone="seg_ne"]')
    await screen.wait(has("#zone-panel li", "Acknowledged"), 5)
    await screen.shot("control-room-acknowledged")


async def test_viewer_sees_no_restricted_data(screen, say) -> None:
    await say("/incident missile @seg_ne s4 coins", as_="steward")
    await say("/arrest violent_disorder x2 inside away inc=1 ref=MPS/CU/1101",
              as_="police_liaison")
    await screen.sign_in(say, "viewer")
    await screen.wait(has("#log li", "INC-1 reported"), 5)
    page = await screen.text()
    assert "Violent disorder" not in page and "MPS/CU" not in await screen.source()
    assert "Arrest" not in await screen.text("#log")
    assert not await screen.run(lambda: screen.driver.find_elements(By.CSS_SELECTOR,
                                                                    "button.act"))
    await screen.shot("control-room-viewer")


async def test_expired_link_is_refused(screen, say, core, clock) -> None:
    result = await say("/web", as_="control")
    clock.advance(timedelta(seconds=core.settings.web_link_ttl_seconds + 1))
    await screen.open(LINK.search(result.reply.text).group(1))
    await screen.click("#signin")
    await screen.wait(has("h1", "Link not valid"), 5)
    await screen.open("/control/")
    await screen.wait(has("h1", "Not signed in"), 5)


async def test_post_match_page_prints_on_a4(screen, say) -> None:
    await say("/incident missile @seg_ne s4 coins", as_="steward")
    await say("/incident disorder @stb_walkway s5 fighting", as_="steward")
    await say("/arrest violent_disorder x2 inside away inc=2", as_="police_liaison")
    await screen.sign_in(say, "safety_officer")
    await screen.wait(has("#log li", "INC-2 reported"), 5)
    await screen.open("/control/post-match")
    await screen.wait(has("h2", "Arrests and banning orders"), 5)
    assert "Violent disorder" in await screen.text()
    await screen.shot("post-match")
    opts = PrintOptions()
    opts.page_width, opts.page_height = 21.0, 29.7  # A4, cm
    pdf = base64.b64decode(await screen.run(screen.driver.print_page, opts))
    pages = len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))
    assert pdf.startswith(b"%PDF") and 1 <= pages <= 2, pages  # 1-2 A4 pages (#23 item 8)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "post-match.pdf").write_bytes(pdf)
    if os.environ.get("MATCHDAY_DOCS_SHOTS"):  # the printed pages, as docs/ shows them
        import pypdfium2 as pdfium

        doc = pdfium.PdfDocument(pdf)
        for i in range(len(doc)):
            doc[i].render(scale=1.25).to_pil().save(ROOT / "docs" / f"post-match-print-{i + 1}.png")
    text = await screen.text()
    assert "Incidents, severity 5 to 1" in text and "Generated" in text
    assert "export chain head" in text


def charted(d: webdriver.Chrome) -> int:
    """Incidents the timeline chart shows: the sum of its bars ("<n> in <phase>")."""
    return int(d.execute_script(
        "return [...document.querySelectorAll('#chart rect > title')]"
        ".reduce((n, t) => n + parseInt(t.textContent, 10), 0)"))


async def test_the_chart_follows_reports_live(screen, say) -> None:
    await screen.sign_in(say, "control")
    await screen.wait(has("#chart", "No incidents yet"), 5)
    await screen.wait(lambda d: "on" in d.find_element(By.ID, "live").get_attribute("class"), 5)
    await say("/incident missile @seg_ne s4 coins", as_="steward")
    # redrawn at most every 1.5 s (live.CHART_S): the deadline allows for one wait
    await screen.wait(lambda d: charted(d) == 1, 5)
    await say("/incident pyro @away_upper s3 flare", as_="steward")
    await screen.wait(lambda d: charted(d) == 2, 5)
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
    driver = screen.driver
    await screen.run(driver.execute_cdp_cmd, "Emulation.setDeviceMetricsOverride",
                     {"width": width, "height": height, "deviceScaleFactor": 1,
                      "mobile": False})
    try:
        for text in ("missile @stb_walkway s4 coins", "pyro @stb_walkway s3 flare",
                     "disorder @bms_lower s5 fighting"):
            await say(f"/incident {text}", as_="steward")
        await screen.sign_in(say, "control")
        await screen.wait(lambda d: d.find_element(By.TAG_NAME, "body")
                          .get_attribute("data-complete"), 5)
        await screen.click('#pins .pin[data-zone="stb_walkway"]')
        await screen.wait(has("#zone-panel h3", "2 incidents"), 5)
        b = await screen.run(driver.execute_script, BOXES)
        m, p, s = b["map"], b["panel"], b["section"]
        overlap = min(m["r"], p["r"]) > max(m["l"], p["l"]) and \
            min(m["b"], p["b"]) > max(m["t"], p["t"])
        assert not overlap, b
        assert s["t"] <= p["t"] and p["b"] <= s["b"] + 1, b  # inside the map's panel
        assert m["b"] - m["t"] > (s["b"] - s["t"]) * 0.4, b  # the map stays big enough
        assert b["width"] <= width, b  # nothing runs off the side of the screen
        await screen.shot(f"control-room-zone-{width}x{height}")
    finally:
        await screen.run(driver.execute_cdp_cmd, "Emulation.clearDeviceMetricsOverride", {})
