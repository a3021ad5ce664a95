"""A failed inspection is titled as one in every record made of the night (issue 36 §18):
the pack's incident list, timeline and PDF, the post-match report and the evidence report
say 'Inspection failed: loose objects not removed', never 'Throwing missiles'; its category
stays missile."""

from __future__ import annotations

import csv
from pathlib import Path

import pypdfium2 as pdfium

from bot.evidence.debrief.pack_folder import build_pack
from bot.evidence.postmatch import build_report, report_pdf
from bot.evidence.report import report_markdown
from bot.evidence.signing import new_key

TITLE = "Inspection failed: loose objects not removed"
EVENT = "Throwing missiles"


def _text(data: bytes | Path) -> str:
    doc = pdfium.PdfDocument(data)
    return " ".join(" ".join(p.get_textpage().get_text_range() for p in doc).split())


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


async def test_the_pack_and_both_reports_title_a_failed_check_as_one(say, core,
                                                                      tmp_path: Path) -> None:
    r = await say("/inspect missiles_removed fail bottles left in block 105", as_="steward")
    assert "Raised INC-1" in r.reply.text, r.reply.text
    fx = await core.active_fixture()
    ground, tz = core.grounds[fx.ground], core.settings.zone
    out = tmp_path / "pack"
    await build_pack(core.store, core.facades, fx, ground, core.settings.config_dir, tz, out,
                     key=new_key())
    [inc] = _rows(out / "incidents.csv")
    assert (inc["type"], inc["what"]) == ("missile", TITLE)
    line = [t["text"] for t in _rows(out / "timeline.csv") if t["ref"] == "INC-1"]
    assert any(TITLE in t for t in line) and not any(EVENT in t for t in line), line
    pack = _text(out / "pack.pdf")
    assert TITLE in pack and EVENT not in pack

    rep = await build_report(core.store, core.facades, core.facades.web.feed, fx, ground, tz,
                             core.clock.now())
    assert [row.type for row in rep.rows] == [TITLE]
    report = _text(report_pdf(rep, None, tz))
    assert TITLE in report and EVENT not in report

    events = await core.store.events(fx.id)
    md = await report_markdown(core.store, core.facades, fx, events, "head")
    assert f"### INC-1 {TITLE}, severity 3" in md, md
    assert f"### INC-1 {EVENT}" not in md
