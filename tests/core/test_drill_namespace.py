"""A drill lives in its own namespace: a replay that adds the same match on the same date as
a live fixture gets a fixture of its own (its own id, so its own keys), and the live one is
left exactly as it was."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot import cli
from bot.app import App
from bot.core.drill import Drill
from bot.domain.clock import VirtualClock
from tests.conftest import Chat

LIVE = "/fixture add West Ham v Chelsea 2026-11-27 19:45 cat=C"


def line(at: str, role: str, text: str) -> str:
    return json.dumps({"at": f"2026-11-27T{at}:00+00:00", "user": role, "role": role,
                       "text": text})


DRILL = [
    line("12:00", "admin", LIVE),
    line("12:01", "admin", "/fixture use westham-chelsea-20261127"),  # a script's plain id
    line("19:00", "steward", "/incident missile @seg_ne s4 coins"),
    line("19:01", "steward", "/incident pyro @away_upper s3 flare"),
    line("19:02", "police_liaison", "/arrest violent_disorder inside away"),
]


@pytest.fixture
async def app(store, settings, clock):
    """The live bot's app on the test Redis."""
    a = App(settings, clock)
    core = await a.start()
    core.cache.ttl = 0
    yield a
    await a.stop()


async def drill_into(app: App, tmp_path: Path, capsys) -> tuple[list[dict], set[str]]:
    """`matchday replay` beside the live app: its rows and the fixtures the drill made."""
    script = tmp_path / "drill.jsonl"
    script.write_text("\n".join(DRILL) + "\n")
    drill = App(app.settings, VirtualClock(datetime(2000, 1, 1, tzinfo=UTC)), drill=Drill())
    await drill.start()
    capsys.readouterr()
    try:
        assert await cli._replay(drill, script, as_json=True) == 0
    finally:
        await drill.stop()
    return [json.loads(x) for x in capsys.readouterr().out.splitlines()], drill.drill.created


async def test_a_drill_of_tonights_match_never_touches_the_live_fixture(app, tmp_path,
                                                                        capsys):
    core = app.core
    say = Chat(core)
    assert (await say(LIVE, as_="admin")).reply.ok  # the real fixture, made live
    live = (await core.active_fixture()).id
    assert (await say("/incident disorder @stb_walkway s4 fight", as_="steward")).reply.ok
    events_before = [(e.kind, e.at, e.data) for e in await core.store.events(live)]

    out, created = await drill_into(app, tmp_path, capsys)
    assert not [r for r in out if "already exists" in r["text"]
                or "not this drill's fixture" in r["text"]], out
    assert any("Logged INC-2" in r["text"] for r in out)  # the drill ran in full

    [drill] = sorted(created)
    assert drill != live and drill.startswith("drill-")
    fx = await core.store.fixture(drill)
    assert fx.drill and fx.title == "West Ham v Chelsea"
    assert [i.type for i in [await core.store.incident(drill, n) for n in (1, 2)]] == [
        "missile", "pyro"]
    assert (await core.store.counts(drill))["arr:total"] == 1

    # The live fixture is as it was: its events, its one incident, no arrest.
    assert [(e.kind, e.at, e.data) for e in await core.store.events(live)] == events_before
    assert (await core.store.incident(live, 1)).type == "disorder"
    assert await core.store.incident(live, 2) is None
    assert (await core.store.counts(live)).get("arr:total", 0) == 0
    assert not (await core.store.fixture(live)).drill

    # Live lists never show a drill; the live bot refuses to work in one.
    assert [f.id for f in await core.store.fixtures()] == [live]
    r = await say(f"/fixture use {drill} all", as_="admin")
    assert not r.reply.ok and "drill" in r.reply.text
    assert (await core.active_fixture()).id == live


async def test_a_live_fixture_added_after_a_drill_gets_its_own_id(app, tmp_path, capsys):
    await drill_into(app, tmp_path, capsys)  # the drill ran first, on the production Redis
    r = await Chat(app.core)(LIVE, as_="admin")
    assert r.reply.ok, r.reply.text  # not "already exists": the drill's id is not its id
    assert [f.id for f in await app.core.store.fixtures()] == ["westham-chelsea-20261127"]
