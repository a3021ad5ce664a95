"""The post-match report for the FA and the SAG (issue #23 item 8): one row per incident,
severity 5 to 1, with its times and outcome; when it was made and the export chain head;
`matchday report --fixture X --pdf` makes the same as a 1-2 page A4 PDF."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pypdfium2 as pdfium

from bot.evidence.export import chain_head
from bot.evidence.postmatch import build_report, report_pdf

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "bot" / "scenarios" / "west_ham_chelsea.jsonl"


def pdf_pages(pdf: bytes) -> list[str]:
    """Each page's text."""
    doc = pdfium.PdfDocument(pdf)
    return [doc[i].get_textpage().get_text_range() for i in range(len(doc))]


async def test_rows_worst_first_with_times_outcome_and_the_chain_head(say, core) -> None:
    await say("/incident medical @gate_f s2 fan fainted", as_="steward")
    core.clock.advance(timedelta(minutes=3))
    await say("/incident missile @seg_ne s4 coins", as_="steward")
    core.clock.advance(timedelta(minutes=2))
    await say("/ack 2")
    core.clock.advance(timedelta(minutes=5))
    await say("/resolve 2 crowd calmed", as_="control")
    await say("/arrest throwing_missiles inside away inc=2", as_="police_liaison")
    fx = await core.active_fixture()
    ground = core.grounds[fx.ground]
    tz = core.settings.zone
    rep = await build_report(core.store, core.facades, core.facades.web.feed, fx, ground, tz,
                             core.clock.now())
    assert [r.id for r in rep.rows] == ["INC-2", "INC-1"]  # severity 5 to 1
    worst = rep.rows[0]
    assert (worst.severity, worst.place, worst.reported, worst.acknowledged, worst.closed) == \
        (4, "NE segregation", "18:03", "18:05", "18:10")
    assert worst.outcome == "Closed, 1 arrest"
    # open, so never named by its last step alone (issue 36)
    assert rep.rows[1].acknowledged == "" and rep.rows[1].outcome == "STILL OPEN"
    assert (rep.events, rep.chain_head) == await chain_head(core.store, fx.id)
    pages = pdf_pages(report_pdf(rep, None, tz))
    assert len(pages) == 1
    text = pages[0]
    assert "INC-2" in text and "NE segregation" in text and rep.chain_head in text
    assert "Generated" in text and "S5 0, S4 1, S3 0, S2 1, S1 0" in text


def test_matchday_report_pdf_of_the_replayed_night(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {
        "MATCHDAY_DATA_DIR": str(tmp_path), "MATCHDAY_APPENDFSYNC": "no"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "bot.cli", *args], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
    replay = cli("replay", str(SCENARIO))
    assert replay.returncode == 0, replay.stderr
    fx = re.search(r"Replayed into (\S+):", replay.stdout).group(1)
    out = tmp_path / "night.pdf"
    made = cli("report", "--fixture", fx, "--pdf", "--out", str(out))
    assert made.returncode == 0, made.stderr
    pages = pdf_pages(out.read_bytes())
    assert 1 <= len(pages) <= 2, len(pages)
    if os.environ.get("MATCHDAY_DOCS_SHOTS"):  # the bundled night's PDF, as docs/ shows it
        doc = pdfium.PdfDocument(out.read_bytes())
        for i in range(len(doc)):
            doc[i].render(scale=1.25).to_pil().save(ROOT / "docs" / f"report-pdf-{i + 1}.png")
    text = "".join(pages)
    assert all(f"INC-{n}" in text for n in range(1, 8)) and "Violent disorder" in text
    # the light map: a pin per zone with its worst severity and count (4 at STB top walkway)
    assert "Where the incidents were" in text and "4 inc." in text
    bad = cli("report", "--fixture", "no-such-night", "--pdf")
    assert bad.returncode == 1 and "no fixture" in bad.stderr and "Traceback" not in bad.stderr
