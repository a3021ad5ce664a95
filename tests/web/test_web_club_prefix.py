"""A club's control room under its own path (/c/<club>/control/) on a deployment of many
clubs: the sign-in link, the pages' links, the script's fetches and the session cookie all
stay inside the club's prefix (#39)."""

from __future__ import annotations

import re

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.runtime import control_room_for
from bot.web.access import COOKIE
from tests.support.web import BROWSER

PREFIX = "/c/north"
LINK = re.compile(r"https?://[^/\s]+(/c/north/control/login/[A-Za-z0-9_-]+)")


async def test_a_clubs_control_room_keeps_to_its_prefix(core, say):
    room = control_room_for(core, f"http://127.0.0.1:8080{PREFIX}", prefix=PREFIX)
    site = web.Application()
    site.add_subapp(f"{PREFIX}/", room.web_app())
    client = TestClient(TestServer(site), headers=BROWSER)
    await client.start_server()
    try:
        asked = await say("/web", as_="control")
        link = LINK.search(asked.reply.text)
        assert link, asked.reply.text  # the link names the club's path
        assert (await client.get(link.group(1))).status == 200
        signed = await client.post(link.group(1))
        assert signed.status == 200
        assert f'content="0;url={PREFIX}/control/"' in await signed.text()
        assert signed.cookies[COOKIE]["path"] == f"{PREFIX}/control"
        screen = await client.get(f"{PREFIX}/control/")
        html = await screen.text()
        assert screen.status == 200, html
        assert f'<base href="{PREFIX}/control/">' in html
        # every link and script is relative to that base: none escapes the prefix
        assert not re.findall(r'(?:href|src|action)="/(?!c/north/)', html)
        assert (await client.get(f"{PREFIX}/control/static/control.js")).status == 200
        assert "fetch(`/" not in await (await client.get(
            f"{PREFIX}/control/static/control.js")).text()
        moved = await client.get(f"{PREFIX}/control", allow_redirects=False)
        assert moved.headers["Location"] == f"{PREFIX}/control/"
        assert (await client.get("/control/")).status == 404  # nothing outside the club's path
    finally:
        await client.close()
        await room.live.close()
