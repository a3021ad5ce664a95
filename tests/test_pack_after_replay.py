"""`matchday pack` after `matchday replay` of the bundled night (issue 25 §4): the pack holds
the night's decisions (a correction among them), the inspection whose walkway netting failed
and the key timings, verifies with `matchday verify`, and never holds a custody reference.
Real CLI subprocesses on the real embedded Redis in a temp data dir."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.test_cli import SCENARIO, matchday

NIGHT = "drill-westham-chelsea-20261202"


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_the_bundled_night_has_its_pack(tmp_path: Path) -> None:
    env = {"MATCHDAY_DATA_DIR": str(tmp_path / "data")}
    assert matchday("replay", str(SCENARIO), env=env, timeout=120).returncode == 0
    p = matchday("pack", "--fixture", NIGHT, "--out", str(tmp_path / "pack"), env=env)
    assert p.returncode == 0, p.stderr
    assert "-page" in p.stdout and "signed manifest" in p.stdout
    out = tmp_path / "pack"
    v = matchday("verify", str(out), env=env)
    assert v.returncode == 0 and v.stdout.startswith("OK:"), v.stdout + v.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert {"pack.pdf", "decisions.csv", "inspections.csv", "key_timings.csv", "timeline.csv",
            "incidents.csv", "response_times.csv", "police_counts.csv"} <= set(manifest["files"])

    decisions = rows(out / "decisions.csv")
    assert [d["id"] for d in decisions] == ["D-1", "D-2", "D-3", "D-4", "D-5", "D-6"]
    assert decisions[0]["source"] == "inspect override"
    # the handover to police was a decision too, its rationale given in the next entry
    assert decisions[2]["source"] == "handover INC-8" and decisions[3]["explains"] == "D-3"
    assert decisions[2]["rationale"] == decisions[3]["rationale"] != ""
    assert decisions[4]["superseded_by"] == "D-6" and decisions[5]["supersedes"] == "D-5"
    assert all(d["rationale"] for d in decisions)
    netting = [c for c in rows(out / "inspections.csv") if c["item"] == "walkway_netting"]
    assert [(c["outcome"], c["incident"]) for c in netting] == [("fail", "INC-1"), ("pass", "")]
    assert [t["key"] for t in rows(out / "key_timings.csv")] == [
        "turnstiles_open", "kick_off", "half_time", "second_half", "full_time",
        "ground_clear", "zone_ex_clear"]
    police = {(r["record"], r["category"], r["value"]): r["count"]
              for r in rows(out / "police_counts.csv")}
    assert police[("arrests", "total", "")] == "7" and police[("bans", "total", "")] == "9"
    # counts, never names or custody references, anywhere in the pack
    for f in out.iterdir():
        assert b"MPS/CU/" not in f.read_bytes(), f.name
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(out / "pack.pdf")
    text = " ".join(" ".join(page.get_textpage().get_text_range() for page in pdf).split())
    assert "MPS/CU/" not in text and "SUPERSEDED by D-6" in text
    assert "PASSED, after FAILED at 17:00 (INC-1)" in text and "Zone Ex clear" in text
    assert len(pdf) == manifest["pack"]["pages"]
