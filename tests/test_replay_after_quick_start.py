"""`matchday replay` of the bundled night after the Quick start (`matchday run`, which makes
tonight's sample fixture): the replay gets its own fixture, and a replay that is refused says
how many lines and fails. Real CLI subprocesses on the real embedded Redis in a temp data dir."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import (
    SCENARIO,
    matchday,
)

NIGHT = "drill-westham-chelsea-20261202"  # the fixture the bundled night's first line adds


def quick_start(tmp_path: Path) -> dict[str, str]:
    """The Quick start's `matchday run` on the bundled night's date; its environment."""
    clock = tmp_path / "clock"
    clock.write_text("2026-12-02T12:00:00+00:00")
    env = {"MATCHDAY_DATA_DIR": str(tmp_path / "data")}
    p = matchday("run", "--as", "steward", env={**env, "MATCHDAY_CLOCK_FILE": str(clock)},
                 stdin="/quit\n")
    assert p.returncode == 0 and "Fixture: West Ham United v Chelsea" in p.stdout, p.stderr
    return env


def test_the_bundled_night_replays_after_the_quick_start(tmp_path: Path) -> None:
    env = quick_start(tmp_path)
    p = matchday("replay", str(SCENARIO), env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "Logged INC-7" in p.stdout
    # the night's deployment plan and its automatic roll call (T-90m), answered on post
    assert "Deployed 6 stewards from the rota." in p.stdout
    assert "18:15   → user:replay:stw-14: 📋 Roll call T-90m · the whole ground" in p.stdout
    assert "📋 Roll call 18:15: 2/8 posts on · not yet: Block 256 gangway (Steward 15)" \
        in p.stdout
    assert f"/control/?fixture={NIGHT}" in p.stdout  # where to look at it next
    assert "not this drill's fixture" not in p.stdout + p.stderr
    ids = [f["id"] for f in json.loads(matchday("fixtures", "--json", env=env).stdout)]
    assert NIGHT in ids and len(ids) == 2  # the sample fixture kept an id of its own
    fig = json.loads(matchday("summary", "--fixture", NIGHT, "--json", env=env).stdout)
    # seven on the night, and the walkway netting that failed its inspection before the gates
    assert fig["arrests"]["total"] == 7 and fig["incidents"]["total"] == 8


def test_a_replay_refused_line_by_line_says_so_and_fails(tmp_path: Path) -> None:
    env = quick_start(tmp_path)
    script = tmp_path / "no_fixture.jsonl"  # no /fixture add: every line needs a fixture
    script.write_text("".join(json.dumps({
        "at": f"2026-12-02T19:{50 + i}:00+00:00", "user": "stw-1", "role": "steward",
        "text": f"/incident missile @seg_ne s{2 + i} coins"}) + "\n" for i in range(3)))
    p = matchday("replay", str(script), env=env)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "replay: 3 of 3 lines refused" in p.stderr and "no fixture of its own" in p.stderr
    assert p.stderr.strip().count("\n") == 0 and "Traceback" not in p.stderr


def test_a_replay_with_some_refused_lines_counts_them_and_succeeds(tmp_path: Path) -> None:
    env = quick_start(tmp_path)
    script = tmp_path / "one_bad.jsonl"
    rows = [("admin", "/fixture add Leyton Orient v Barnet 2026-12-02 19:45"),
            ("steward", "/incident missile @seg_ne s3 coins"),
            ("steward", "/arrest 1 violent_disorder")]  # not for a steward's role
    script.write_text("".join(json.dumps({
        "at": f"2026-12-02T19:{10 + i}:00+00:00", "user": role, "role": role, "text": text})
        + "\n" for i, (role, text) in enumerate(rows)))
    p = matchday("replay", str(script), env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "replay: 1 of 3 lines refused" in p.stderr
