"""Drills stay drills: a replay writes only into fixtures it created (the live fixture needs
--live), never touches the live schedule, and re-running a grown drill logs only new lines."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from bot import cli
from bot.app import App
from bot.core.drill import Drill
from bot.runtime import console_for
from bot.sample import ensure_sample_fixture
from bot.store.plans import Plans

DRILL_FX = "drill-arsenal-spurs-20261127"


def line(at: str, user: str, role: str, text: str) -> str:
    return json.dumps({"at": at, "user": user, "role": role, "text": text})


NO_ADD = [
    line("2026-11-27T19:00:00+00:00", "stw-1", "steward", "/incident missile @seg_ne s5 coins"),
    line("2026-11-27T19:05:00+00:00", "ctl-1", "control", "/status"),
]
WITH_ADD = [
    line("2026-11-27T12:00:00+00:00", "adm", "admin", "/fixture add Arsenal v Spurs "
         "2026-11-27 19:45 cat=C-IRD"),
    line("2026-11-27T19:00:00+00:00", "stw-1", "steward", "/incident missile @seg_ne s5 coins"),
    line("2026-11-27T19:01:00+00:00", "stw-2", "steward", "/incident pyro @away_upper s3"),
    line("2026-11-27T19:02:00+00:00", "stw-3", "steward", "/incident disorder @stb_walkway s4"),
]


@pytest.fixture
async def app(store, settings, clock):
    """An app on the test Redis with tonight's (live) sample fixture active."""
    a = App(settings, clock)
    core = await a.start()
    core.cache.ttl = 0
    await ensure_sample_fixture(core)
    yield a
    await a.stop()


async def replay(app: App, path: Path, capsys, live: bool = False, code: int = 0) -> list[dict]:
    """`matchday replay [--live]` beside the live app, on its Redis and clock."""
    drill = App(app.settings, app.clock, drill=Drill(live=live))
    await drill.start()
    capsys.readouterr()
    try:
        assert await cli._replay(drill, path, as_json=True) == code
    finally:
        await drill.stop()
    return [json.loads(x) for x in capsys.readouterr().out.splitlines()]


async def live_untouched(app: App, live_id: str) -> None:
    store = app.core.store
    assert await store.incident(live_id, 1) is None
    assert await app.core.facades.deadlines.deadlines(live_id) == {}
    # tonight's briefings not marked missed
    assert await Plans(store.gateway).missed_slots(live_id) == []
    assert await app.core.facades.choices.active_fixture_id() == live_id
    assert [e.kind for e in await store.events(live_id)] == ["fixture.created"]


async def test_a_drill_without_its_own_fixture_logs_nothing_live(app, tmp_path, capsys):
    live = (await app.core.active_fixture()).id
    drill = tmp_path / "drill.jsonl"
    drill.write_text("\n".join(NO_ADD) + "\n")
    out = await replay(app, drill, capsys, code=1)  # every line refused: the replay fails
    refusals = [r["text"] for r in out if r["to"] == "stw-1"]
    assert refusals and "--live" in refusals[0] and "Logged" not in refusals[0]
    assert not any("Escalated to" in r["text"] for r in out)
    await live_untouched(app, live)


async def test_a_drill_logs_into_the_fixture_it_created(app, tmp_path, capsys):
    live = (await app.core.active_fixture()).id
    drill = tmp_path / "drill.jsonl"
    drill.write_text("\n".join([*WITH_ADD, line("2026-11-27T19:03:00+00:00", "adm", "admin",
                                                 f"/fixture use {live}")]) + "\n")
    out = await replay(app, drill, capsys)
    assert any("Logged INC-3" in r["text"] for r in out)
    assert any("Escalated to" in r["text"] for r in out)  # the drill's own escalations fire
    assert "--live" in [r["text"] for r in out if r["to"] == "adm"][-1]  # live is fenced off
    assert (await app.core.store.incident(DRILL_FX, 3)).type == "disorder"
    await live_untouched(app, live)


async def test_live_flag_logs_into_the_live_fixture_but_leaves_its_schedule(app, tmp_path,
                                                                             capsys):
    live = (await app.core.active_fixture()).id
    drill = tmp_path / "drill.jsonl"
    drill.write_text("\n".join(NO_ADD) + "\n")
    out = await replay(app, drill, capsys, live=True)
    assert any("Logged INC-1" in r["text"] for r in out)
    store = app.core.store
    assert (await store.incident(live, 1)).type == "missile"
    assert not any("Escalated to" in r["text"] for r in out)  # no live escalation at 19:00
    assert await Plans(store.gateway).missed_slots(live) == []


async def test_appending_a_line_to_a_drill_logs_only_the_new_line(app, tmp_path, capsys):
    drill = tmp_path / "drill.jsonl"
    drill.write_text("\n".join(WITH_ADD[:3]) + "\n")
    await replay(app, drill, capsys)
    drill.write_text("\n".join(WITH_ADD) + "\n")  # one more report at the end
    await replay(app, drill, capsys)
    drill.write_text("# a comment moves every line down\n" + "\n".join(WITH_ADD) + "\n")
    await replay(app, drill, capsys)
    counts = await app.core.store.counts(DRILL_FX)
    assert counts["inc:total"] == 3


async def test_identical_lines_in_one_drill_are_two_reports(app, tmp_path, capsys):
    twice = line("2026-11-27T20:00:00+00:00", "dfo-1", "police_liaison",
                 "/arrest violent_disorder inside away")
    drill = tmp_path / "drill.jsonl"
    drill.write_text("\n".join([WITH_ADD[0], twice, twice]) + "\n")
    await replay(app, drill, capsys)
    await replay(app, drill, capsys)
    assert (await app.core.store.counts(DRILL_FX))["arr:total"] == 2


async def test_a_restarted_console_does_not_log_the_same_line_again(core):
    arrest = "/arrest violent_disorder inside away"
    for _ in range(2):  # the console is closed and opened again, the same line re-sent
        console = console_for(core, "police_liaison", stdout=io.StringIO())
        console.become("police_liaison")
        await console.say(arrest)
        core.notifier.taps.remove(console.tap)
    fx = await core.active_fixture()
    assert (await core.store.counts(fx.id))["arr:total"] == 1
    again = console_for(core, "police_liaison", stdout=io.StringIO())
    await again.say(arrest)
    await again.say(arrest)  # typed again in the same session: a new message
    assert (await core.store.counts(fx.id))["arr:total"] == 2


def test_the_replay_command_fences_off_the_live_fixture(store, redis_url, tmp_path):
    from tests.support.cli import matchday

    env = {"REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path)}
    p = matchday("run", "--as", "control", env=env, stdin="/quit\n")  # tonight's fixture
    assert p.returncode == 0, p.stderr
    live = json.loads(matchday("fixtures", "--json", env=env).stdout)[0]["id"]
    drill = tmp_path / "drill.jsonl"
    drill.write_text("\n".join(NO_ADD) + "\n")

    def incidents() -> int:
        s = matchday("summary", "--fixture", live, "--json", env=env)
        return json.loads(s.stdout)["incidents"]["total"]

    p = matchday("replay", str(drill), env=env)
    assert p.returncode == 1 and "2 of 2 lines refused" in p.stderr  # nothing it could do
    assert "--live" in p.stdout and incidents() == 0
    p = matchday("replay", str(drill), "--live", env=env)
    assert p.returncode == 0, p.stderr
    assert "Logged INC-1" in p.stdout and incidents() == 1
