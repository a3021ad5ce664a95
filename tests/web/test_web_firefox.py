"""The control-room screen in Firefox (Debian's firefox-esr, installed by .ci/run), driven
over WebDriver BiDi, which Firefox speaks itself (tests/web/bidi.py; no geckodriver).

Marked `browser`: run with `python -m pytest -m browser`; asked for on a machine without
Firefox, it fails with one line (it does not skip). The screenshot goes to
test-artifacts/ (or $MATCHDAY_TEST_ARTIFACTS).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.web.bidi import FIREFOX, Firefox, firefox
from tests.web.conftest import browser_binary

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.browser
ARTIFACTS = Path(os.environ.get("MATCHDAY_TEST_ARTIFACTS", ROOT / "test-artifacts"))
LINK = re.compile(r"https?://[^/\s]+(/control/login/[A-Za-z0-9_-]+)")


@pytest_asyncio.fixture
async def ff(tmp_path: Path) -> AsyncIterator[Firefox]:
    binary = browser_binary(FIREFOX, "Firefox")
    async with firefox(binary, tmp_path / "profile") as browser:
        yield browser


def text_in(css: str, text: str) -> str:
    """A JavaScript test: some element matching css contains the text."""
    return (f"[...document.querySelectorAll({json.dumps(css)})]"
            f".some((e) => e.textContent.includes({json.dumps(text)}))")


async def test_firefox_signs_in_by_link_and_sees_a_report_live(ff, control_url, say) -> None:
    result = await say("/web", as_="control")
    await ff.navigate(control_url + LINK.search(result.reply.text).group(1))
    await ff.js("document.getElementById('signin').click()")
    await ff.until("location.pathname === '/control/' && !!document.body.dataset.complete"
                   " && document.getElementById('live').classList.contains('on')", 20)
    await say("/incident missile @seg_ne s4 coins thrown across the line", as_="steward")
    # on the map (a pulsing pin on the segregation line) and in the log, within 2 s
    await ff.until("!!document.querySelector('#pins .pin.pulse.sev4[data-zone=\"seg_ne\"]')", 2)
    await ff.until(text_in("#log li", "INC-1 reported: Throwing missiles"), 2)
    await ff.until(text_in("#chart rect > title", "1 in"), 5)  # redrawn every 1.5 s at most
    png = await ff.screenshot(ARTIFACTS / "firefox-control-room.png")
    assert png.startswith(b"\x89PNG")
