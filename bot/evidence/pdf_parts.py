"""The few pieces every signed document's PDF is made of (fpdf2, A4, black and white): a
title, headings, paragraphs, tables and the signing footnote."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.evidence.debrief.pdf import latin

if TYPE_CHECKING:
    from fpdf import FPDF


KEEP_WITH_NEXT = 30  # mm: a heading never ends a page on its own


class Page:
    """An A4 document being written, top to bottom."""

    def __init__(self, title: str, subtitle: str = "") -> None:
        from fpdf import FPDF

        self.pdf: FPDF = FPDF(orientation="P", unit="mm", format="A4")
        self.pdf.set_margins(14, 14, 14)
        self.pdf.set_auto_page_break(True, 14)
        self.pdf.set_title(latin(title))
        self.pdf.add_page()
        self.pdf.set_font("Helvetica", "B", 18)
        self.pdf.multi_cell(0, 9, latin(title), new_x="LMARGIN", new_y="NEXT", align="L")
        if subtitle:
            self.pdf.set_font("Helvetica", "B", 12)
            self.pdf.multi_cell(0, 7, latin(subtitle), new_x="LMARGIN", new_y="NEXT", align="L")
        self.pdf.set_font("Helvetica", "", 10)

    def heading(self, text: str, size: float = 13) -> None:
        """A section heading (on a new page when too little of this one is left for it and a
        few lines under it)."""
        if self.pdf.get_y() > self.pdf.h - 14 - KEEP_WITH_NEXT:
            self.pdf.add_page()
        self.pdf.ln(2)
        self.pdf.set_font("Helvetica", "B", size)
        self.pdf.multi_cell(0, 7, latin(text), new_x="LMARGIN", new_y="NEXT", align="L")
        self.pdf.set_font("Helvetica", "", 10)

    def para(self, text: str, mono: bool = False) -> None:
        """A paragraph (mono: a key or hash, in Courier)."""
        if mono:
            self.pdf.set_font("Courier", "", 8.5)
        self.pdf.multi_cell(0, 5, latin(text), new_x="LMARGIN", new_y="NEXT", align="L")
        self.pdf.set_font("Helvetica", "", 10)

    def table(self, widths: tuple[int, ...], head: tuple[str, ...],
              rows: list[tuple[str, ...]]) -> None:
        """A table with a heading row."""
        self.pdf.set_font("Helvetica", "", 9)
        with self.pdf.table(col_widths=widths, text_align="LEFT", line_height=4.6,
                            first_row_as_headings=True) as t:
            t.row([latin(h) for h in head])
            for r in rows:
                t.row([latin(c) for c in r])
        self.pdf.set_font("Helvetica", "", 10)

    def signed_by(self, public_key: str) -> None:
        """How to check the document: the manifest beside it, signed with this key."""
        self.para("This PDF is listed with its SHA-256 in manifest.json, signed with the "
                  "installation's export key; check it with: matchday verify <folder> --key "
                  "<public key>.")
        self.para(f"Public key: {public_key}", mono=True)

    def done(self) -> tuple[bytes, int]:
        """The PDF's bytes and its page count."""
        return bytes(self.pdf.output()), self.pdf.page_no()
