"""The Martyn's Law document (issue 36, beyond): `matchday martyns-law --ground X` makes the
enhanced-tier document of public-protection procedures and measures from the ground file,
as a PDF and JSON under a signed manifest `matchday verify` accepts; its revision moves only
when the content changes; the drills' procedures are its evidence (reach and acknowledgement
times); a revision is recorded as sent to the regulator. Real CLI subprocesses on the
embedded Redis of a temp data dir."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from tests.support.cli import ROOT, matchday

SCENARIO = ROOT / "bot" / "scenarios" / "west_ham_chelsea.jsonl"


def pdf_text(path: Path) -> str:
    doc = pdfium.PdfDocument(str(path))
    try:
        return "\n".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))
    finally:
        doc.close()


@pytest.mark.long  # a minute or more of subprocesses: started first
def test_the_document_is_made_signed_revised_and_evidenced_by_drills(tmp_path: Path) -> None:
    env = {"MATCHDAY_DATA_DIR": str(tmp_path / "data")}
    assert matchday("replay", str(SCENARIO), env=env, timeout=180).returncode == 0
    out = tmp_path / "doc"
    p = matchday("martyns-law", "--ground", "london_stadium", "--out", str(out), env=env)
    assert p.returncode == 0, p.stderr
    assert "revision 1 (NEW revision: send it to the Security Industry Authority by" in p.stdout
    doc = json.loads((out / "martyns_law.json").read_text())
    assert (doc["revision"], doc["tier"]) == (1, "enhanced")
    assert [q["title"] for q in doc["procedures"]] == ["EVACUATE", "INVACUATE", "LOCKDOWN",
                                                       "ALL CLEAR"]
    assert {m["kind"] for m in doc["measures"]} == {"monitoring", "movement", "physical",
                                                   "information"}
    evac = next(d for d in doc["drill_log"] if d["procedure"] == "evacuate")
    assert (evac["planned"], evac["reached"], evac["unreached"], evac["acknowledged"]) == \
        (3, 2, 1, 1)
    assert evac["first_ack_s"] == 60 and evac["fixture"] == "drill-westham-chelsea-20261202"
    text = pdf_text(out / "martyns_law.pdf")
    assert "London Stadium - revision 1" in text and "Hostile vehicle mitigation" in text
    assert "2 of 3 (67%); 1 radioed" in text

    ok = matchday("verify", str(out), env=env)
    assert ok.returncode == 0 and ok.stdout.startswith("OK: Martyn's Law document"), ok.stdout
    (out / "martyns_law.json").write_text(json.dumps({**doc, "tier": "standard"}))
    bad = matchday("verify", str(out), env=env)
    assert bad.returncode == 1 and "martyns_law.json: file changed" in bad.stdout

    again = matchday("martyns-law", "--ground", "london_stadium", "--out", str(out), env=env)
    assert "revision 1 (unchanged; due with" in again.stdout, again.stdout + again.stderr

    cfg = tmp_path / "config"
    shutil.copytree(ROOT / "config", cfg)
    ground = cfg / "grounds" / "london_stadium.toml"
    ground.write_text(ground.read_text().replace("Bollards and barriers closed from three",
                                                 "Bollards and barriers closed from four"))
    env2 = env | {"MATCHDAY_CONFIG_DIR": str(cfg)}
    p = matchday("martyns-law", "--ground", "london_stadium", "--out", str(out), env=env2)
    assert "revision 2 (NEW revision" in p.stdout, p.stdout + p.stderr
    assert json.loads((out / "martyns_law.json").read_text())["revision"] == 2

    sent = matchday("martyns-law", "--ground", "london_stadium", "--sent", "2", env=env2)
    assert sent.returncode == 0 and "Revision 2 of London Stadium's document recorded" \
        in sent.stdout
    p = matchday("martyns-law", "--ground", "london_stadium", "--out", str(out), env=env2)
    assert "revision 2 (unchanged; sent to the regulator)" in p.stdout
    for args, line in ((["--ground", "london_stadium", "--sent", "9"],
                        "london_stadium has no revision 9 (revisions: 1, 2)"),
                       (["--ground", "wembley"], "no ground 'wembley' (grounds: london_stadium)")):
        p = matchday("martyns-law", *args, env=env2)
        assert p.returncode == 2 and line in p.stderr and "Traceback" not in p.stderr, p.stderr
