"""`matchday stewards --fixture <drill fixture>` finds a drill's fixture, as `summary`,
`pack` and `export` do (issue 36 §19)."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import matchday

SCENARIO = Path(__file__).parents[2] / "bot" / "scenarios" / "west_ham_chelsea.jsonl"

DRILL = "drill-westham-chelsea-20261202"


def test_the_stewards_record_of_a_drill_fixture(store, redis_url, tmp_path) -> None:
    env = {"REDIS_URL": redis_url, "MATCHDAY_DATA_DIR": str(tmp_path)}
    assert matchday("replay", str(SCENARIO), "--json", env=env).returncode == 0
    p = matchday("stewards", "--fixture", DRILL, "--out", str(tmp_path / "rec"), env=env)
    assert p.returncode == 0, p.stderr
    assert "of 1 fixture(s)" in p.stdout and (tmp_path / "rec" / "stewards.csv").exists()
    p = matchday("stewards", "--fixture", "drill-nothing-here", env=env)
    assert p.returncode == 1 and "no fixture 'drill-nothing-here'" in p.stderr
