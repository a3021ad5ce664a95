"""A small WebDriver BiDi client for the Firefox tests: Firefox speaks BiDi natively (no
geckodriver), so the test starts `firefox-esr --headless --remote-debugging-port=0` and talks
to it over one websocket."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

FIREFOX = ("firefox-esr", "firefox")
# quiet and quick in a test: no first-run pages, updates, telemetry or remote settings
PREFS = {
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "app.update.disabledForTesting": True,
    "services.settings.server": "data:,",
    "browser.newtabpage.enabled": False,
}


class BiDiError(RuntimeError):
    """An error answer from the browser."""


def firefox_binary() -> str | None:
    """The system Firefox (Debian's firefox-esr), or None."""
    return next((found for name in FIREFOX if (found := shutil.which(name))), None)


class Firefox:
    """One BiDi session and its first browsing context (tab)."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws, self.context, self._id = ws, "", 0

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """A command and its result (events in between are not subscribed to)."""
        self._id += 1
        mine = self._id
        await self.ws.send(json.dumps({"id": mine, "method": method, "params": params}))
        while True:
            msg = json.loads(await self.ws.recv())
            if msg.get("id") != mine:
                continue
            if msg.get("type") == "error":
                raise BiDiError(f"{method}: {msg.get('error')}: {msg.get('message')}")
            return dict(msg["result"])

    async def navigate(self, url: str) -> None:
        """Open a URL in the tab and wait for it to load."""
        await self.call("browsingContext.navigate", context=self.context, url=url,
                        wait="complete")

    async def js(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (strings, numbers, booleans)."""
        res = await self.call("script.evaluate", expression=expression, awaitPromise=True,
                              target={"context": self.context}, resultOwnership="none")
        if res.get("type") == "exception":
            raise BiDiError(res["exceptionDetails"].get("text", "exception"))
        return res["result"].get("value")

    async def until(self, expression: str, seconds: float) -> Any:
        """Poll a JavaScript condition until it is truthy; fail after `seconds` (a page in the
        middle of a navigation answers with an error: polled again)."""
        deadline = time.monotonic() + seconds
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                value = await self.js(expression)
                if value:
                    return value
            except BiDiError as e:
                last = e
            await asyncio.sleep(0.05)
        raise AssertionError(f"not true within {seconds} s: {expression} ({last})")

    async def screenshot(self, path: Path) -> bytes:
        """Save the tab as a PNG."""
        res = await self.call("browsingContext.captureScreenshot", context=self.context)
        png = base64.b64decode(res["data"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png)
        return png


@asynccontextmanager
async def firefox(binary: str, profile: Path, width: int = 1920,
                  height: int = 1080) -> AsyncIterator[Firefox]:
    """Headless Firefox on a fresh profile, a BiDi session and a tab of the given size."""
    profile.mkdir(parents=True, exist_ok=True)
    (profile / "user.js").write_text("".join(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n"
                                             for k, v in PREFS.items()))
    port_file = profile / "WebDriverBiDiServer.json"
    port_file.unlink(missing_ok=True)
    log = profile / "firefox.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([binary, "--headless", "--no-remote",
                                 "--remote-debugging-port=0", "--profile", str(profile),
                                 "about:blank"], stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        port = None
        while port is None:  # Firefox writes its port here once it listens
            with suppress(OSError, ValueError, KeyError):
                port = json.loads(port_file.read_text())["ws_port"]
            if proc.poll() is not None:
                raise RuntimeError(f"{binary} exited {proc.returncode}: "
                                   f"{log.read_text(errors='replace')[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{binary} did not start its WebDriver BiDi server")
            await asyncio.sleep(0.1)
        async with connect(f"ws://127.0.0.1:{port}/session", max_size=None) as ws:
            ff = Firefox(ws)
            await ff.call("session.new", capabilities={})
            tree = await ff.call("browsingContext.getTree")
            ff.context = tree["contexts"][0]["context"]
            await ff.call("browsingContext.setViewport", context=ff.context,
                          viewport={"width": width, "height": height})
            try:
                yield ff
            finally:
                with suppress(Exception):
                    await ff.call("session.end")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
