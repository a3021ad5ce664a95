"""Control-room screens benchmark: reports through the core while 50 screens follow the live feed.

The bot process serves the control room on a local port; the 50 screens (SSE clients, one
connection each) run in a second process, as browsers would on other machines. Prints
`name: value` lines:
- reports_per_s_without_screens: write_path-style reports, no screen connected (the mean of a
  run before and a run after the screens, so drift cancels)
- reports_per_s_with_50_screens and ratio_reports_with_50_screens (goal >= 0.9)
- event_to_screen_p50_ms / _p95_ms: from the event's stream id (Redis server time when logged)
  to its arrival at a screen, over every (screen, report) pair
- first_paint_ms_1000: first contentful paint of the live screen with 1,000 incidents, cold (a
  fresh headless Chromium profile; the median of 3, the first on the server's first page),
  from the browser's Performance API; first_byte_ms_1000: until the page's first byte (the
  server's part); screen_complete_ms_1000: until every incident is fetched and drawn
- flashpoint_event_to_screen_p50_ms / _p95_ms: 300 reports paced over 60 s (a flashpoint's
  rate, bench/flashpoint.py's) while 10 screens follow the feed, from each event's stream id
  to its arrival at every screen (goal p95 <= 1,000)
- focus_lost_per_100_updates: a control screen in headless Chromium at 1366x768 with the
  keyboard focus on an Acknowledge button (else a card) while reports arrive live: how often
  an update took the focus away, per 100 updates (goal 0; the first round's screen lost it
  on every one)
- min_text_px_wall_1080: the smallest text on the wall mode's screen at 1920x1080 with the
  same incidents (goal >= 40 px, readable at 3 m; the desk layout's for comparison:
  min_text_px_desk_1080)
Setup is bench/rig.py's and the reports are bench/write_path.py's, so the figures compare.
Usage: python bench/web.py [--reports N] [--screens N] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aiohttp import ClientSession, ClientTimeout, web  # noqa: E402

from bench import cli, rig  # noqa: E402
from bot.runtime import control_room_for  # noqa: E402
from bot.store.outbox import Outbox  # noqa: E402
from bot.web.access import COOKIE, LINK_PATH, Server, Session  # noqa: E402
from rigs.wall_probe import FOCUS, MIN_TEXT_PX  # noqa: E402


async def reports(core, n: int, start: int) -> float:
    """Reports per second, one at a time, as bench/write_path.py sends them."""
    return await rig.reports(core, n, start, tag="bench-web", reply_via=None)


# ---------------------------------------------------------------- the screens' process
REPORTED = re.compile(rb'id: (\d+)-\d+\nevent: change\ndata: \{"event": ?\{[^}]*?"kind": ?'
                      rb'"incident\.reported"')


async def screen(base: str, sid: str, expect: int, ready: asyncio.Event,
                 out: list[float]) -> None:
    """One screen: follow the feed until `expect` new reports have arrived (kept cheap: the
    screens share the machine with the bot and Redis)."""
    got, tail = 0, b""
    async with ClientSession(timeout=ClientTimeout(total=None)) as s, \
            s.get(base + "/control/events", headers={"Cookie": f"{COOKIE}={sid}"}) as resp:
        assert resp.status == 200, resp.status
        await resp.content.readline()  # "retry: ..." : connected and subscribed
        ready.set()
        async for chunk in resp.content.iter_any():
            now_ms = time.time() * 1000
            buf = tail + chunk
            cut = buf.rfind(b"\n\n") + 2  # whole messages only; the rest waits for more
            buf, tail = buf[:cut], buf[cut:]
            for m in REPORTED.finditer(buf):
                out.append(max(0.0, now_ms - int(m.group(1))))
                got += 1
            if got >= expect:
                return


async def screens_main(base: str, sids: list[str], expect: int) -> None:
    lat: list[float] = []
    readies = [asyncio.Event() for _ in sids]
    tasks = [asyncio.create_task(screen(base, s, expect, r, lat))
             for s, r in zip(sids, readies, strict=True)]
    all_ready = asyncio.ensure_future(asyncio.gather(*(r.wait() for r in readies)))
    done, _ = await asyncio.wait([all_ready, *tasks], return_when=asyncio.FIRST_COMPLETED)
    for t in done:
        if t is not all_ready:
            t.result()  # a screen failed before all were connected: say why
    print("ready", flush=True)
    await asyncio.wait_for(asyncio.gather(*tasks), 300)
    lat.sort()
    print(json.dumps({"n": len(lat), "p50": statistics.median(lat),
                      "p95": lat[max(0, int(len(lat) * 0.95) - 1)]}), flush=True)


# ---------------------------------------------------------------- the bot's process
def first_paint_ms(url: str) -> tuple[float, float, float] | None:
    """(first contentful paint, first byte of the page, every incident drawn) in ms after the
    screen's navigation started, in headless Chromium, or None without it."""
    if not browser():
        return None
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    d = chromium(1920, 1080)
    try:
        d.get(url)
        d.find_element(By.ID, "signin").click()
        WebDriverWait(d, 30).until(lambda d: d.execute_script(
            "return document.body && document.body.dataset.complete"))
        fcp = d.execute_script("return performance.getEntriesByName('first-contentful-paint')"
                               "[0].startTime")
        first_byte = d.execute_script("return performance.getEntriesByType('navigation')[0]"
                                      ".responseStart")
        done = d.execute_script("return document.body.dataset.complete")  # all drawn
        return float(fcp), float(first_byte), float(done)
    finally:
        d.quit()


def chromium(width: int, height: int):  # noqa: ANN201 (selenium is imported here)
    """A headless Chromium of the given size, on the CPUs the bot does not use."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or ""
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--hide-scrollbars"):
        opts.add_argument(arg)
    mine = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    if mine is not None:  # the browser is another machine's: not on the bot's CPU
        os.sched_setaffinity(0, set(range(1, os.cpu_count() or 2)) or mine)
    try:
        d = webdriver.Chrome(service=Service(shutil.which("chromedriver") or ""), options=opts)
    finally:
        if mine is not None:
            os.sched_setaffinity(0, mine)
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    return d


def signed_in(d, link: str) -> None:  # noqa: ANN001
    """Open a sign-in link, press Sign in and wait until every incident is drawn."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    d.get(link)
    d.find_element(By.ID, "signin").click()
    WebDriverWait(d, 60).until(lambda d: d.execute_script(
        "return document.body && document.body.dataset.complete && "
        "document.getElementById('live').classList.contains('on')"))


HOLD = """
const el = document.querySelector('#alerts button.act') ||
  document.querySelector('.col[data-status="reported"] button.act') ||
  document.querySelector('.col[data-status="reported"] li.card');
el.focus();
"""
NEWEST = "return (document.querySelector('#log li') || {dataset: {}}).dataset.id || ''"


async def screen_figures(core, link: str, wall_link: str, updates: int) -> dict[str, float]:
    """Focus kept through live updates (1366x768) and the smallest text in the wall mode and
    the desk layout (1920x1080), in headless Chromium."""
    from selenium.webdriver.support.ui import WebDriverWait

    d = await asyncio.to_thread(chromium, 1366, 768)
    try:
        await asyncio.to_thread(signed_in, d, link)
        await asyncio.to_thread(d.execute_script, HOLD + FOCUS)
        held = await asyncio.to_thread(d.execute_script, FOCUS)
        lost = 0
        for i in range(updates):
            newest = await asyncio.to_thread(d.execute_script, NEWEST)
            await reports(core, 1, 5 * 10**6 + i)
            await asyncio.to_thread(WebDriverWait(d, 30).until, lambda d, was=newest:
                                    d.execute_script(NEWEST) != was)
            # two frames: the screen has drawn the update
            await asyncio.to_thread(d.execute_async_script, "const done = arguments[0]; "
                                    "requestAnimationFrame(() => requestAnimationFrame(done));")
            lost += await asyncio.to_thread(d.execute_script, FOCUS) != held
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": 1920, "height": 1080, "deviceScaleFactor": 1, "mobile": False})
        await asyncio.to_thread(d.execute_async_script, "const done = arguments[0]; "
                                "requestAnimationFrame(() => requestAnimationFrame(done));")
        desk = await asyncio.to_thread(d.execute_script, MIN_TEXT_PX)
        await asyncio.to_thread(d.get, wall_link)
        await asyncio.to_thread(WebDriverWait(d, 60).until, lambda d: d.execute_script(
            "return document.body && document.body.dataset.complete"))
        await asyncio.to_thread(d.execute_async_script, "const done = arguments[0]; "
                                "requestAnimationFrame(() => requestAnimationFrame(done));")
        wall = await asyncio.to_thread(d.execute_script, MIN_TEXT_PX)
    finally:
        await asyncio.to_thread(d.quit)
    return {"focus_lost_per_100": lost * 100 / updates, "held": held,
            "wall_min": wall["min"], "desk_min": desk["min"]}


def browser() -> bool:
    """Whether headless Chromium and its driver are here (the first paint needs them)."""
    return bool(shutil.which("chromium") and shutil.which("chromedriver"))


def pin(cpus: set[int]) -> bool:
    """Keep this process (and what it starts) on some CPUs: the screens stand in for browsers
    on other machines, so they must not take the bot's or Redis's CPU."""
    if not hasattr(os, "sched_setaffinity") or (os.cpu_count() or 1) < 2:
        return False
    os.sched_setaffinity(0, cpus)
    return True


async def screens_process(base: str, sids: list[str], expect: int) -> asyncio.subprocess.Process:
    """The screens' process, connected and subscribed (it says "ready")."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--screens-of", base, "--expect", str(expect),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(("\n".join(sids) + "\n").encode())
    await proc.stdin.drain()
    proc.stdin.close()
    line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode().strip()
    assert line == "ready", line
    return proc


async def flashpoint(core, base: str, sids: list[str], n: int, seconds: float) -> dict:
    """n reports paced evenly over `seconds` while the screens follow: their latencies."""
    proc = await screens_process(base, sids, n)
    assert proc.stdout is not None
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    for i in range(n):
        await reports(core, 1, 4 * 10**6 + i)
        await asyncio.sleep(max(0.0, t0 + (i + 1) * seconds / n - loop.time()))
    lat = json.loads((await asyncio.wait_for(proc.stdout.readline(), 300)).decode())
    await proc.wait()
    return lat


async def main(n_reports: int, n_screens: int, flash_screens: int = 10,
               flash_reports: int = 300, flash_seconds: float = 60.0,
               painted: int = 1000, paints: int = 3, updates: int = 100) -> None:
    pinned = pin({0})  # before the embedded Redis starts: it inherits the bot's CPU
    # the virtual clock moves 11 minutes a report: sessions must outlive the whole run
    async with rig.bench_core(MATCHDAY_WEB_SESSION_TTL=10**9) as (core, _url, _tmp):
        core.notifier.outbox = Outbox(core.store.gateway)  # as `matchday run` and write_path.py
        await reports(core, painted, 0)  # incidents for the first paint (1,000)
        room = control_room_for(core, "http://127.0.0.1")
        runner = web.AppRunner(room.web_app())
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        base = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore
        server = Server(base, room.access.link_ttl)  # the links' server: this one
        # cold: a fresh browser profile each time, the first the server's first page
        # (nothing read or cached yet); the median of `paints`, as the machine is shared
        painted_ms = []
        for _ in range(paints):
            link = await room.access.issue_link("console:control", server)
            painted_ms.append(await asyncio.to_thread(first_paint_ms, link))
        paint = None if None in painted_ms else tuple(
            statistics.median(p[k] for p in painted_ms if p is not None) for k in range(3))
        figures = None
        if browser():
            link = await room.access.issue_link("console:control", server)
            figures = await screen_figures(core, link, base + "/control/?mode=wall", updates)
        sids = []
        for _ in range(n_screens):
            link = await room.access.issue_link("console:control", server)
            got = await room.access.redeem(link.rsplit(LINK_PATH, 1)[1])
            assert isinstance(got, Session), got
            sids.append(got.sid)

        await reports(core, 300, 10**5)  # warm up (script load, caches)
        before = await reports(core, n_reports, 10**6)
        proc = await screens_process(base, sids, n_reports)
        assert proc.stdout is not None
        with_screens = await reports(core, n_reports, 2 * 10**6)
        # the screens' figures, once every screen has every report (fail, don't hang)
        lat = json.loads((await asyncio.wait_for(proc.stdout.readline(), 300)).decode())
        await proc.wait()
        after = await reports(core, n_reports, 3 * 10**6)
        flash = await flashpoint(core, base, sids[:flash_screens], flash_reports,
                                 flash_seconds)
        without = (before + after) / 2
        print(f"screens: {n_screens}")
        print(f"screens_on_their_own_cpu: {'yes' if pinned else 'no'}")
        print(f"reports_per_s_without_screens: {without:.0f}")
        print(f"reports_per_s_with_{n_screens}_screens: {with_screens:.0f}")
        print(f"ratio_reports_with_{n_screens}_screens: {with_screens / without:.2f}")
        print(f"event_to_screen_p50_ms: {lat['p50']:.1f}")
        print(f"event_to_screen_p95_ms: {lat['p95']:.1f}")
        print(f"events_received: {lat['n']}")
        print(f"flashpoint_reports: {flash_reports} in {flash_seconds:.0f} s, "
              f"{flash_screens} screens")
        print(f"flashpoint_event_to_screen_p50_ms: {flash['p50']:.1f}")
        print(f"flashpoint_event_to_screen_p95_ms: {flash['p95']:.1f}")
        if paint is not None:
            print(f"first_paint_ms_{painted}: {paint[0]:.0f} (median of {paints} fresh "
                  "browsers: " + ", ".join(f"{p[0]:.0f}" for p in painted_ms if p is not None)
                  + ")")
            print(f"first_byte_ms_{painted}: {paint[1]:.0f}")
            print(f"screen_complete_ms_{painted}: {paint[2]:.0f}")
        if figures is not None:
            print(f"focus_lost_per_100_updates: {figures['focus_lost_per_100']:.0f} "
                  f"({updates} live updates, focus on {figures['held']})")
            print(f"min_text_px_wall_1080: {figures['wall_min']:.1f}")
            print(f"min_text_px_desk_1080: {figures['desk_min']:.1f}")
        await runner.cleanup()
        await room.live.close()


SMOKE = {"reports": 50, "screens": 3, "flash_screens": 2, "flash_reports": 10,
         "flash_seconds": 2.0, "painted": 50, "paints": 1, "updates": 10}

if __name__ == "__main__":
    ap = cli.parser(__doc__)
    ap.add_argument("--reports", type=int, default=2000)
    ap.add_argument("--screens", type=int, default=50)
    ap.add_argument("--flash-screens", type=int, default=10)
    ap.add_argument("--flash-reports", type=int, default=300)
    ap.add_argument("--flash-seconds", type=float, default=60.0)
    ap.add_argument("--painted", type=int, default=1000, help="incidents on the painted screen")
    ap.add_argument("--paints", type=int, default=3, help="fresh browsers (the median)")
    ap.add_argument("--updates", type=int, default=100, help="live updates while focused")
    ap.add_argument("--screens-of", help=argparse.SUPPRESS)  # the screens' process
    ap.add_argument("--expect", type=int, default=0, help=argparse.SUPPRESS)
    a = cli.parse(ap, SMOKE)
    if a.screens_of:
        pin(set(range(1, os.cpu_count() or 2)))
        asyncio.run(screens_main(a.screens_of, sys.stdin.read().split(), a.expect))
    elif a.smoke and not browser():  # smoke runs every part, the first paint too
        sys.exit("web bench: the first paint needs chromium and chromedriver "
                 "(apt-get install chromium chromium-driver)")
    else:
        asyncio.run(main(a.reports, a.screens, a.flash_screens, a.flash_reports,
                         a.flash_seconds, a.painted, a.paints, a.updates))
