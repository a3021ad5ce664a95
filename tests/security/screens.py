"""Driving the control room over HTTP in the security tests: sign in, follow the live feed."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient

from tests.conftest import Chat
from tests.support.web import new_client
from tests.support.web_session import (
    link_for,
    sign_in,
)

__all__ = ["follow", "invited", "link_for", "new_client", "sign_in", "until_end"]


async def invited(say: Chat, role: str, who: str) -> None:
    """A member who joined by invite (their role lives in Redis, so it can change)."""
    invite = await say(f"/invite {role}", as_="admin")
    code = re.search(r"/join (\w+)", invite.reply.text).group(1)
    joined = await say(f"/join {code}", as_=who)
    assert joined.reply.ok, joined.reply.text


async def follow(client: TestClient) -> ClientResponse:
    """Open the live feed (plain text) and wait until the server follows it for this screen."""
    resp = await client.get("/control/events", headers={"Accept-Encoding": "identity"})
    assert resp.status == 200
    assert (await resp.content.readline()).startswith(b"retry:")
    return resp


async def until_end(resp: ClientResponse, guard: float = 10) -> tuple[list[tuple[str, Any]], bool]:
    """Every SSE event (kind, data) until the server ends the stream, and whether it did
    within `guard` seconds (a guard against hanging, not a timing assertion)."""
    out: list[tuple[str, Any]] = []
    kind, data = "", ""

    async def pump() -> None:
        nonlocal kind, data
        while True:
            raw = await resp.content.readline()
            if not raw:
                return
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
            elif line == "" and data:
                out.append((kind, json.loads(data)))
                kind, data = "", ""

    try:
        await asyncio.wait_for(pump(), guard)
    except TimeoutError:
        return out, False
    return out, True
