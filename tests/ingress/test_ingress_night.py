"""The bundled night's ingress feed (issue 35): the replay alerts control as the stands fill,
says "close it" for the away section, and the debrief pack holds the ingress curve per stand
and each alert with what was done. Real CLI subprocesses on the embedded Redis."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.support.cli import (
    SCENARIO,
    matchday,
)

NIGHT = "drill-westham-chelsea-20261202"


def test_the_bundled_night_alerts_on_ingress_and_its_pack_has_the_curve(tmp_path: Path) -> None:
    env = {"MATCHDAY_DATA_DIR": str(tmp_path / "data")}
    night = matchday("replay", str(SCENARIO), env=env, timeout=120)
    assert night.returncode == 0, night.stderr
    assert ("Away section, upper tier (north-east corner) is AT CAPACITY (3,000 of 3,000): "
            "close it. Close Away turnstiles (Gate B).") in night.stdout
    assert "Gate E turnstiles: the turnstile bank is STALLED" in night.stdout
    p = matchday("pack", "--fixture", NIGHT, "--out", str(tmp_path / "pack"), env=env)
    assert p.returncode == 0, p.stderr
    out = tmp_path / "pack"
    manifest = json.loads((out / "manifest.json").read_text())
    assert {"ingress_curve.png", "ingress_alerts.csv"} <= set(manifest["files"])
    assert (out / "ingress_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with (out / "ingress_alerts.csv").open(encoding="utf-8") as f:
        alerts = list(csv.DictReader(f))
    full = next(a for a in alerts if a["alert"] == "full")
    assert (full["zone"], full["at"], full["done_at"]) == (
        "away_upper", "2026-12-02T19:30:10+00:00", "2026-12-02T19:31:00+00:00")
    assert full["done"].startswith("closed gate_away: away section full")
    assert {(a["alert"], a["zone"]) for a in alerts} >= {
        ("threshold", "stb"), ("threshold", "away_upper"), ("stalled", "gate_e"), ("late", "bms")}
    v = matchday("verify", str(out), env=env)
    assert v.returncode == 0 and v.stdout.startswith("OK:"), v.stdout + v.stderr
