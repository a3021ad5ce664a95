"""`matchday pack` after `matchday replay` of the bundled night (issue 25 §4): the pack holds
the night's decisions (a correction among them), the inspection whose walkway netting failed
and the key timings, verifies with `matchday verify`, and never holds a custody reference.
Real CLI subprocesses on the real embedded Redis in a temp data dir."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from tests.support.cli import (
    ROOT,
    SCENARIO,
    matchday,
)

NIGHT = "drill-westham-chelsea-20261202"


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.long  # a minute or more of subprocesses: started first
def test_the_bundled_night_has_its_pack(tmp_path: Path) -> None:
    env = {"MATCHDAY_DATA_DIR": str(tmp_path / "data")}
    night = matchday("replay", str(SCENARIO), env=env, timeout=120)
    assert night.returncode == 0
    # its EVACUATE of the STB upper tier counts the rota and names who to radio (#32)
    assert "EVACUATE sent to 2 of 3 stewards planned (STB upper 250-262)" in night.stdout
    assert "1 not on the bot — radio them: 15 Steward 15 (Block 256 gangway)" in night.stdout
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
    assert [d["id"] for d in decisions] == [f"D-{n}" for n in range(1, 11)]
    assert decisions[0]["source"] == "inspect override"
    # the handover to police was a decision too, its rationale given in the next entry
    assert decisions[2]["source"] == "handover INC-8" and decisions[3]["explains"] == "D-3"
    assert decisions[2]["rationale"] == decisions[3]["rationale"] != ""
    # the EVACUATE and its ALL CLEAR were decisions too, each explained by the next entry
    assert (decisions[4]["type"], decisions[5]["explains"]) == ("procedure", "D-5")
    assert (decisions[8]["type"], decisions[9]["explains"]) == ("procedure", "D-9")
    assert decisions[6]["superseded_by"] == "D-8" and decisions[7]["supersedes"] == "D-7"
    assert all(d["rationale"] for d in decisions)
    assert (decisions[1]["type"], decisions[7]["type"]) == ("police_support", "gate")
    assert decisions[0]["type"] == "turnstiles" and decisions[2]["type"] == "handover"
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
    if os.environ.get("MATCHDAY_DOCS_SHOTS"):  # the bundled night's pack, as docs/ shows it
        for i in range(len(pdf)):
            pdf[i].render(scale=1.25).to_pil().save(ROOT / "docs" / f"pack-pdf-{i + 1}.png")
    text = " ".join(" ".join(page.get_textpage().get_text_range() for page in pdf).split())
    assert "MPS/CU/" not in text and "SUPERSEDED by D-8" in text
    assert "not on the bot, to radio: 15 Steward 15 (Block 256 gangway)" in text
    assert "PASSED, after FAILED at 17:00:00 (INC-1)" in text and "Zone Ex clear" in text
    assert "Calling police support" in text and "Fill rate" in text
    assert len(pdf) == manifest["pack"]["pages"]
    # the night's stewarding: its rota filled six posts and the automatic roll call (T-90m)
    steward = rows(out / "stewarding.csv")
    assert sum(int(r["filled_or_answered"]) for r in steward
               if r["section"] == "deployment") == 6
    evacuate = next(r for r in steward if r["what"] == "EVACUATE")
    assert (evacuate["planned_or_asked"], evacuate["filled_or_answered"]) == ("3", "1")
    [call] = [r for r in steward if r["section"] == "roll_call"]
    assert call["target"] == "all" and int(call["filled_or_answered"]) >= 2
    _period_packs(tmp_path, env)


def _period_packs(tmp_path: Path, env: dict[str, str]) -> None:
    """`matchday pack --month` and `--season` for the SAG, end to end: a live fixture of
    November 2026 is in its month and in season 2026-27; the replayed night is a drill, so in
    no period pack; each folder's manifest is signed and names each fixture's own (signed,
    verifiable) pack."""
    from bot.evidence.export import signed_part
    from bot.evidence.signing import signature_ok

    add = matchday("run", "--as", "admin", env=env,
                   stdin="/fixture add Leyton Orient v Barnet 2026-11-14 15:00\n/quit\n")
    assert add.returncode == 0, add.stderr
    for flag, value, live in (("--month", "2026-11", 1), ("--season", "2026-27", 1),
                              ("--month", "2026-12", 0)):
        folder = tmp_path / f"period-{value}"
        p = matchday("pack", flag, value, "--out", str(folder), env=env)
        assert p.returncode == 0 and "signed manifest" in p.stdout, p.stdout + p.stderr
        manifest = json.loads((folder / "manifest.json").read_text())
        assert manifest[flag[2:]] == value
        assert signature_ok(manifest["public_key"], manifest["signature"],
                            signed_part(manifest))
        ids = [r["fixture"] for r in rows(folder / "period.csv")]
        orient = [i for i in ids if "orient" in i.lower()]
        assert len(orient) == live and NIGHT not in ids, ids
        assert sorted(manifest["fixture_manifests"]) == sorted(f"{i}/manifest.json"
                                                                for i in ids)
        for i in orient:
            v = matchday("verify", str(folder / i), env=env)
            assert v.returncode == 0 and v.stdout.startswith("OK:"), v.stdout + v.stderr
    _verify_period(tmp_path / "period-2026-11", env)
    bad = matchday("pack", "--month", "2026-13", env=env)
    assert bad.returncode == 2 and "--month takes YYYY-MM" in bad.stderr
    assert "Traceback" not in bad.stderr


def _verify_period(folder: Path, env: dict[str, str]) -> None:
    """`matchday verify` on a period folder checks its signed manifest, its own files and
    every fixture pack in it; an edit to any of them, or a pack taken out, fails it."""
    ok = matchday("verify", str(folder), env=env)
    assert ok.returncode == 0 and ok.stdout.startswith("OK: period pack of 1 fixture"), \
        ok.stdout + ok.stderr
    [pack] = [p for p in folder.iterdir() if p.is_dir()]
    for path, edit, why in (
            (folder / "period.csv", lambda b: b + b"\nX,1,2", "period.csv: file changed"),
            (pack / "pack.pdf", lambda b: b + b"%", f"{pack.name}/pack.pdf: file changed"),
            (folder / "manifest.json", lambda b: b.replace(b'"2026-11"', b'"2026-10"'),
             "signature does not match")):
        before = path.read_bytes()
        path.write_bytes(edit(before))
        v = matchday("verify", str(folder), env=env)
        assert v.returncode == 1 and v.stdout.startswith("FAILED") and why in v.stdout, \
            v.stdout + v.stderr
        path.write_bytes(before)
    pack.rename(folder / "elsewhere")
    gone = matchday("verify", str(folder), env=env)
    assert gone.returncode == 1 and "fixture pack is missing" in gone.stdout, gone.stdout
