"""The pack's tables drawn line by line (issue 36: a 1,704-row timeline made the pack take
12-16 s): every cell's words are on the page, a long cell wraps instead of running over, a
row taller than a page goes on over the next with the heading repeated, and 2,000 rows
are drawn in well under the time fpdf2's table took."""

from __future__ import annotations

import time

import pypdfium2 as pdfium
from fpdf import FPDF

from bot.evidence.debrief.pdf_table import draw_table

HEAD = ("Time", "What", "Ref", "Detail")
WIDTHS = (16, 31, 30, 105)


def _pdf() -> FPDF:
    pdf = FPDF(orientation="P", unit="mm", format="A4")
    pdf.set_margins(14, 14, 14)
    pdf.set_auto_page_break(True, 14)
    pdf.add_page()
    return pdf


def _pages(pdf: FPDF) -> list[str]:
    doc = pdfium.PdfDocument(bytes(pdf.output()))
    return [" ".join(doc[i].get_textpage().get_text_range().split()) for i in range(len(doc))]


def test_every_word_of_every_row_is_drawn_and_the_heading_repeats() -> None:
    long = " ".join(f"word{i}" for i in range(700))  # taller than a page at this width
    rows = [(f"18:{i // 60:02d}:{i % 60:02d}", "incident", f"INC-{i}", f"S3 report {i}")
            for i in range(120)] + [("19:00:00", "note", "INC-7", long)]
    pdf = _pdf()
    draw_table(pdf, WIDTHS, HEAD, rows)
    pages = _pages(pdf)
    text = " ".join(pages)
    assert all(f"INC-{i} S3 report {i}" in text for i in range(120))
    assert all(f"word{i}" in text for i in range(700))  # the tall row, every word of it
    assert len(pages) >= 3 and all(p.startswith("Time What Ref Detail") for p in pages)


def test_two_thousand_rows_take_well_under_a_second_per_thousand() -> None:
    rows = [(f"18:{i // 60 % 60:02d}:{i % 60:02d}", "incident", f"INC-{i}",
             f"S{1 + i % 5} Throwing missiles at North-east segregation line (home/away) {i}")
            for i in range(2000)]
    pdf = _pdf()
    t = time.perf_counter()
    draw_table(pdf, WIDTHS, HEAD, rows)
    took = time.perf_counter() - t
    assert took < 4.0, took  # 0.2 s here; fpdf2's table took 7.9 s for the same rows
    assert "INC-1999" in _pages(pdf)[-1]
