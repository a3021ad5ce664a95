"""Issue 20, item 6: intelligence (the risk category's reason, `/fixture note intel`, risk
groups) was restricted in briefings but written verbatim into fixture.created/changed events,
so the ordinary (FA/SAG) export carried it. Now it lives in the fixture's restricted log and
leaves only through `export --restricted`. A marker planted in each restricted field is found
in no unrestricted output: the log, the export, a viewer's screen, feed and chats, summaries."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest_asyncio
from aiohttp.test_utils import TestClient

from bot.evidence.summary import summary_figures
from bot.runtime import control_room_for
from tests.support.cli import (
    matchday,
)
from tests.support.web import new_client
from tests.support.web_session import (
    sign_in,
)

MARKERS = {"category_why": "WHYMARK7731", "intel": "INTELMARK7731",
           "risk_groups": "RISKMARK7731"}
# the sample fixture's own restricted fields, set when it was created
SAMPLE = ("history of disorder between the clubs", "2 home risk groups")


def leaks(text: str) -> list[str]:
    return [m for m in (*MARKERS.values(), *SAMPLE) if m in text]


@pytest_asyncio.fixture
async def client(core) -> AsyncIterator[TestClient]:
    room = control_room_for(core, "http://127.0.0.1:8080")
    c = await new_client(room)
    yield c
    await c.close()
    await room.live.close()


async def plant(say) -> None:
    for text in (f"/fixture category C-IRD {MARKERS['category_why']}",
                 f"/fixture note intel {MARKERS['intel']}",
                 f"/fixture note risk_groups {MARKERS['risk_groups']}",
                 "/fixture note gates Gate B opens 17:45"):
        r = await say(text, as_="admin")
        assert r.reply.ok, r.reply.text
    r = await say("/briefing", as_="police_commander")  # cleared for intelligence: all there
    assert all(m in r.reply.text for m in MARKERS.values()), r.reply.text


async def test_no_unrestricted_output_holds_intelligence(say, core, store, client, redis_url,
                                                        tmp_path):
    await sign_in(client, say, "viewer")
    feed = await client.get("/control/events?after=0-0")  # the viewer's live feed
    await plant(say)
    fx = await core.active_fixture()

    # the ordinary log
    log = json.dumps([e.data for e in await store.events(fx.id)])
    assert leaks(log) == []
    assert "Gate B opens" in log  # ordinary notes stay in the log

    # the ordinary (FA/SAG) export and the summaries
    env = {"REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path / "data")}
    p = matchday("export", "--fixture", fx.id, "--out", str(tmp_path / "ex"), env=env)
    assert p.returncode == 0, p.stderr
    for f in (tmp_path / "ex").iterdir():
        assert leaks(f.read_text()) == [], f.name
    p = matchday("summary", "--fixture", fx.id, "--json", env=env)
    assert p.returncode == 0 and leaks(p.stdout) == [], p.stdout
    assert leaks(json.dumps(await summary_figures(store, core.facades, fx))) == []

    # a viewer's chats
    await say("/incident pyro @away_upper s3 flare", as_="steward")
    for text in ("/status", "/briefing", "/summary", "/fixtures", "/incident 1"):
        r = await say(text, as_="viewer")
        assert r is None or leaks(r.reply.text) == [], (text, r.reply.text)

    # a viewer's screen and feed
    seen: list[str] = []

    async def until_the_incident() -> None:
        while not any("incident.reported" in line for line in seen):
            seen.append((await feed.content.readline()).decode())

    await asyncio.wait_for(until_the_incident(), 15)  # a guard against hanging
    feed.close()
    assert leaks("".join(seen)) == []
    for path in ("/control/", "/control/incidents", "/control/post-match",
                 "/control/chart.svg"):
        resp = await client.get(path)
        assert resp.status == 200, path
        assert leaks(await resp.text()) == [], path

    # the restricted export carries every one of them, in its restricted log only
    p = matchday("export", "--fixture", fx.id, "--out", str(tmp_path / "r"), "--restricted",
                 "--by", "console:police_commander", env=env)
    assert p.returncode == 0, p.stderr
    restricted = (tmp_path / "r" / "restricted_events.jsonl").read_text()
    assert all(m in restricted for m in (*MARKERS.values(), *SAMPLE)), restricted
    assert leaks((tmp_path / "r" / "events.jsonl").read_text()) == []
    assert matchday("verify", str(tmp_path / "r"), env=env).returncode == 0
