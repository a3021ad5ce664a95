"""The times of each incident reach what leaves the building: `matchday summary --json` and
the pack's incidents.csv carry occurred, platform, acknowledged and resolved times beside the
receipt time (issue 36, beyond). Real CLI subprocesses on the embedded Redis."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.support.cli import matchday

FX = "drill-arsenal-spurs-20261205"
NIGHT = [
    ("16:00:00", "ops-admin", "admin", "/fixture add Arsenal v Spurs 2026-12-05 19:45 cat=B"),
    ("16:01:00", "ops-admin", "admin", "/fixture use arsenal-spurs-20261205"),
    ("18:20:00", "stw-21", "steward", "/incident pyro @gate_away s3 12 min ago flare at gate"),
    ("18:21:30", "ctl", "control", "/ack 1"),
    ("18:40:00", "ctl", "control", "/resolve 1 out"),
]


def test_summary_json_and_pack_csv_carry_every_time(tmp_path: Path) -> None:
    script = tmp_path / "night.jsonl"
    script.write_text("".join(json.dumps({"at": f"2026-12-05T{t}+00:00", "user": u,
                                          "role": r, "text": x}) + "\n"
                              for t, u, r, x in NIGHT), encoding="utf-8")
    env = {"MATCHDAY_DATA_DIR": str(tmp_path / "data")}
    p = matchday("replay", str(script), env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    s = matchday("summary", "--fixture", FX, "--json", env=env)
    assert s.returncode == 0, s.stderr
    times = json.loads(s.stdout)["incident_times"]["INC-1"]
    assert times == {"reported_at": "2026-12-05T18:20:00+00:00",
                     "occurred_at": "2026-12-05T18:08:00+00:00", "platform_at": "",
                     "acknowledged_at": "2026-12-05T18:21:30+00:00",
                     "resolved_at": "2026-12-05T18:40:00+00:00"}
    pk = matchday("pack", "--fixture", FX, "--out", str(tmp_path / "pack"), env=env)
    assert pk.returncode == 0, pk.stderr
    with (tmp_path / "pack" / "incidents.csv").open(encoding="utf-8") as f:
        row = next(csv.DictReader(f))
    assert (row["occurred_at"], row["acknowledged_at"], row["resolved_at"]) == (
        "2026-12-05T18:08:00+00:00", "2026-12-05T18:21:30+00:00", "2026-12-05T18:40:00+00:00")
