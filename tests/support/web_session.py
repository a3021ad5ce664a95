"""Signing in to the control room and reading its screens and events."""

from __future__ import annotations

import asyncio
import json
import re

from aiohttp.test_utils import TestClient

from bot.core.dispatch import Core
from tests.conftest import Chat

LINK = re.compile(r"https?://[^/\s]+(/control/login/[A-Za-z0-9_-]+)")


async def link_for(say: Chat, who: str) -> str:
    """The path of a sign-in link, asked for with /web in chat."""
    result = await say("/web", as_=who)
    assert result is not None and result.reply.ok, result
    m = LINK.search(result.reply.text)
    assert m, result.reply.text
    return m.group(1)


async def sign_in(client: TestClient, say: Chat, who: str) -> str:
    """Sign a client in as a console member; its CSRF token."""
    path = await link_for(say, who)
    page = await client.get(path)
    assert page.status == 200 and "Sign in" in await page.text()
    resp = await client.post(path)
    assert resp.status == 200, await resp.text()
    screen = await client.get("/control/")
    assert screen.status == 200
    html = await screen.text()
    return re.search(r'<meta name="csrf" content="([^"]+)"', html).group(1)


async def refusals(core: Core) -> list[dict[str, str]]:
    """Refusals of members (the audit trail) and of clients without a session (their own)."""
    anonymous = await core.facades.audit.stranger_refusals(50)
    trail = await core.facades.audit.audit_log(50)
    return [a for a in trail + anonymous if a["action"] == "refused"]


def state_of(html: str) -> dict:
    raw = re.search(r'<script type="application/json" id="state">(.*?)</script>', html, re.S)
    return json.loads(raw.group(1))


async def read_events(resp, n: int, want: str = "change") -> list[tuple[str, dict]]:
    """The next n SSE events of one kind (`change`, `delivery`) as (id, data)."""
    out: list[tuple[str, dict]] = []
    sid, kind, data = "", "", ""

    async def pump() -> None:
        nonlocal sid, kind, data
        while len(out) < n:
            line = (await resp.content.readline()).decode().rstrip("\n")
            if line.startswith("id: "):
                sid = line[4:]
            elif line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
            elif line == "" and data:
                if kind == want:
                    out.append((sid, json.loads(data)))
                sid, kind, data = "", "", ""

    await asyncio.wait_for(pump(), 15)  # a guard against hanging, not a timing assertion
    return out
