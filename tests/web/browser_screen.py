"""One screen, two browsers: the control-room browser tests drive headless Chromium (Selenium,
chromedriver) and Firefox (WebDriver BiDi, tests/web/bidi.py) through the same few calls, so
every test runs in both. Conditions are JavaScript expressions, judged in the page."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.print_page_options import PrintOptions

from tests.conftest import Chat
from tests.web.bidi import BiDiError, Firefox

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("MATCHDAY_TEST_ARTIFACTS", ROOT / "test-artifacts"))
LINK = re.compile(r"https?://[^/\s]+(/control/login/[A-Za-z0-9_-]+)")
KEYS = {"Tab": "\ue004", "Enter": "\ue007", "Escape": "\ue00c"}  # WebDriver key codes


def has(css: str, text: str = "") -> str:
    """A condition: some element matching css contains the text (as rendered)."""
    return (f"[...document.querySelectorAll({json.dumps(css)})]"
            f".some((e) => (e.innerText ?? e.textContent).includes({json.dumps(text)}))")


def shown(css: str) -> str:
    """A condition: some element matching css is displayed."""
    return (f"[...document.querySelectorAll({json.dumps(css)})]"
            ".some((e) => e.getClientRects().length > 0 && "
            "getComputedStyle(e).visibility !== 'hidden')")


def body_data(name: str) -> str:
    """The value of a data- attribute of <body> ('' when unset)."""
    return f"(document.body && document.body.dataset.{name} || '')"


LIVE = "document.getElementById('live').classList.contains('on')"


class Screen:
    """A browser tab on the control room (`base`), whichever the browser."""

    name = ""

    def __init__(self, base: str) -> None:
        self.base = base

    async def _js(self, code: str) -> Any:
        raise NotImplementedError

    async def js(self, expr: str) -> Any:
        """The value of a JavaScript expression (awaited, through JSON)."""
        got = await self._js(f"(async () => JSON.stringify(await ({expr})))()")
        return None if got is None else json.loads(got)

    async def run(self, body: str) -> Any:
        """The value a JavaScript function body returns."""
        return await self.js(f"(async () => {{ {body} }})()")

    async def until(self, expr: str, seconds: float) -> Any:
        """Poll a condition until it holds; fail after `seconds` (a page being redrawn or
        navigated answers with an error now and then: polled again)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        last: Exception | None = None
        while loop.time() < deadline:
            try:
                if value := await self.js(expr):
                    return value
            except (WebDriverException, BiDiError) as e:
                last = e
            await asyncio.sleep(0.05)
        raise AssertionError(f"{self.name}: not true within {seconds} s: {expr} ({last})")

    async def open(self, path: str) -> None:
        raise NotImplementedError

    async def click(self, css: str) -> None:
        raise NotImplementedError

    async def keys(self, *names: str) -> None:
        """Press keys (Tab, Enter, Escape) on whatever has the focus."""
        raise NotImplementedError

    async def resize(self, width: int, height: int) -> None:
        raise NotImplementedError

    async def print_a4(self) -> bytes:
        raise NotImplementedError

    async def _png(self) -> bytes:
        raise NotImplementedError

    async def reset(self) -> None:
        """A blank page (the event stream closes) and no cookies: ready for the next test."""
        raise NotImplementedError

    async def text(self, css: str = "body") -> str:
        """An element's text as rendered."""
        return str(await self.js(f"document.querySelector({json.dumps(css)}).innerText"))

    async def source(self) -> str:
        return str(await self.js("document.documentElement.outerHTML"))

    async def shot(self, name: str) -> Path:
        """Save the tab as test-artifacts/<name>.png (Firefox's as <name>-firefox.png)."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}{'' if self.name == 'chromium' else '-' + self.name}.png"
        path.write_bytes(await self._png())
        return path

    async def sign_in(self, say: Chat, who: str) -> None:
        """Ask for /web in chat, open the link and press Sign in."""
        result = await say("/web", as_=who)
        await self.open(LINK.search(result.reply.text).group(1))
        await self.click("#signin")
        await self.until("location.pathname === '/control/' && !!document.body", 10)


class Chromium(Screen):
    """Headless Chromium through Selenium (each call in a thread: the bot keeps serving)."""

    name = "chromium"

    def __init__(self, driver: webdriver.Chrome, base: str) -> None:
        super().__init__(base)
        self.driver = driver

    async def _call(self, fn: Any, *args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    async def _js(self, code: str) -> Any:
        return await self._call(self.driver.execute_script, f"return {code};")

    async def open(self, path: str) -> None:
        await self._call(self.driver.get, self.base + path)

    async def click(self, css: str) -> None:
        """A real click on the element (found again if the screen redrew it meanwhile)."""
        from selenium.webdriver.common.by import By

        def press() -> bool:
            self.driver.find_element(By.CSS_SELECTOR, css).click()
            return True
        await self._retry(press, css)

    async def _retry(self, fn: Any, what: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5
        while True:
            try:
                await self._call(fn)
                return
            except WebDriverException:
                if loop.time() > deadline:
                    raise
                await asyncio.sleep(0.05)

    async def keys(self, *names: str) -> None:
        text = "".join(KEYS[n] for n in names)
        await self._call(lambda: self.driver.switch_to.active_element.send_keys(text))

    async def resize(self, width: int, height: int) -> None:
        await self._call(self.driver.execute_cdp_cmd, "Emulation.setDeviceMetricsOverride",
                         {"width": width, "height": height, "deviceScaleFactor": 1,
                          "mobile": False})

    async def print_a4(self) -> bytes:
        opts = PrintOptions()
        opts.page_width, opts.page_height = 21.0, 29.7  # A4, cm
        return base64.b64decode(await self._call(self.driver.print_page, opts))

    async def _png(self) -> bytes:
        return bytes(await self._call(self.driver.get_screenshot_as_png))

    async def reset(self) -> None:
        await self._call(self.driver.execute_cdp_cmd, "Emulation.clearDeviceMetricsOverride", {})
        await self._call(self.driver.get, "about:blank")
        await self._call(self.driver.delete_all_cookies)


class Gecko(Screen):
    """Firefox over WebDriver BiDi."""

    name = "firefox"

    def __init__(self, ff: Firefox, base: str) -> None:
        super().__init__(base)
        self.ff = ff

    async def _js(self, code: str) -> Any:
        return await self.ff.js(code)

    async def open(self, path: str) -> None:
        await self.ff.navigate(self.base + path)

    async def click(self, css: str) -> None:
        """A real pointer click in the middle of the element (waits for it to be there)."""
        await self.until(f"!!document.querySelector({json.dumps(css)})", 5)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5
        while True:
            try:
                found = await self.ff.call(
                    "script.evaluate", target={"context": self.ff.context}, awaitPromise=False,
                    expression=f"(() => {{ const e = document.querySelector({json.dumps(css)});"
                               " e.scrollIntoView({block: 'nearest'}); return e; })()",
                    resultOwnership="root")
                ref = {"sharedId": found["result"]["sharedId"]}
                await self.ff.call("input.performActions", context=self.ff.context, actions=[
                    {"type": "pointer", "id": "mouse", "actions": [
                        {"type": "pointerMove", "x": 0, "y": 0,
                         "origin": {"type": "element", "element": ref}},
                        {"type": "pointerDown", "button": 0},
                        {"type": "pointerUp", "button": 0}]}])
                return
            except (BiDiError, KeyError):
                if loop.time() > deadline:
                    raise
                await asyncio.sleep(0.05)

    async def keys(self, *names: str) -> None:
        acts = []
        for n in names:
            acts += [{"type": "keyDown", "value": KEYS[n]}, {"type": "keyUp", "value": KEYS[n]}]
        await self.ff.call("input.performActions", context=self.ff.context,
                           actions=[{"type": "key", "id": "keyboard", "actions": acts}])

    async def resize(self, width: int, height: int) -> None:
        await self.ff.call("browsingContext.setViewport", context=self.ff.context,
                           viewport={"width": width, "height": height})

    async def print_a4(self) -> bytes:
        res = await self.ff.call("browsingContext.print", context=self.ff.context,
                                 page={"width": 21.0, "height": 29.7}, background=True)
        return base64.b64decode(res["data"])

    async def _png(self) -> bytes:
        res = await self.ff.call("browsingContext.captureScreenshot", context=self.ff.context)
        return base64.b64decode(res["data"])

    async def reset(self) -> None:
        await self.resize(1920, 1080)
        await self.ff.navigate("about:blank")
        await self.ff.call("storage.deleteCookies")


def start_chromium() -> webdriver.Chrome:
    """Headless Chromium at 1920x1080, the wall screen's size."""
    from selenium.webdriver.chrome.service import Service

    from tests.web.conftest import browser_binary

    def binary(names: tuple[str, ...]) -> str:
        return browser_binary(names, "Chromium and its driver")

    opts = webdriver.ChromeOptions()
    opts.binary_location = binary(("chromium", "chromium-browser"))
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1920,1080", "--hide-scrollbars", "--force-device-scale-factor=1"):
        opts.add_argument(arg)
    return webdriver.Chrome(service=Service(binary(("chromedriver",))), options=opts)


class Browsers:
    """The browsers of a test module, each started when a test first asks for it."""

    def __init__(self, profiles: Path) -> None:
        self.profiles = profiles
        self.chrome: webdriver.Chrome | None = None
        self.ff: Firefox | None = None
        self._stack = AsyncExitStack()

    async def screen(self, name: str, base: str) -> Screen:
        """A screen in Chromium or Firefox on the control room at `base`."""
        if name == "chromium":
            if self.chrome is None:
                self.chrome = await asyncio.to_thread(start_chromium)
            return Chromium(self.chrome, base)
        if self.ff is None:
            from tests.web.bidi import FIREFOX, firefox
            from tests.web.conftest import browser_binary

            binary = browser_binary(FIREFOX, "Firefox")
            self.ff = await self._stack.enter_async_context(firefox(binary, self.profiles))
        return Gecko(self.ff, base)

    async def close(self) -> None:
        """Quit both."""
        if self.chrome is not None:
            await asyncio.to_thread(self.chrome.quit)
        await self._stack.aclose()
