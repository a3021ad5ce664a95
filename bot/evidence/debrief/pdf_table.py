"""A bordered table drawn line by line: the pack's tables (a 1,700-row timeline among them)
without fpdf2's table layout, which measured every character of every cell several times
(26 of a 500-incident pack's 31 seconds). Same look: widths shared out over the page
width, a bold heading row repeated on each page, cells wrapped at spaces, a single-line
cell centred in a taller row, and a row too tall for what is left of a page continued on
the next."""

from __future__ import annotations

from typing import Any

PAD = 1.0  # mm of text inside a cell's border, left and right


class Measure:
    """Text widths in the current font, one character measured once."""

    def __init__(self, pdf: Any) -> None:
        self.pdf = pdf
        self.widths: dict[str, float] = {}

    def __call__(self, text: str) -> float:
        """The width of `text` in mm."""
        w = self.widths
        total = 0.0
        for ch in text:
            got = w.get(ch)
            if got is None:
                got = w[ch] = self.pdf.get_string_width(ch)
            total += got
        return total


def wrap(text: str, width: float, measure: Measure) -> list[str]:
    """The lines of `text` within `width` mm: broken at spaces, a word longer than a line
    cut where it must; its own line breaks kept."""
    out: list[str] = []
    space = measure(" ")
    for para in text.split("\n"):
        line, used = "", 0.0
        for word in para.split(" "):
            ww = measure(word)
            if line and used + space + ww <= width:
                line, used = f"{line} {word}", used + space + ww
                continue
            if line:
                out.append(line)
            while ww > width and len(word) > 1:  # a word wider than the cell: cut it
                cut = len(word) - 1
                while cut > 1 and measure(word[:cut]) > width:
                    cut -= 1
                out.append(word[:cut])
                word = word[cut:]
                ww = measure(word)
            line, used = word, ww
        out.append(line)
    return out


def draw_table(pdf: Any, widths: tuple[float, ...], head: tuple[str, ...],
               rows: list[tuple[str, ...]], *, size: float = 9.5, line_h: float = 5.0) -> None:
    """Draw the table from the current position, adding pages as it needs."""
    scale = pdf.epw / sum(widths)
    cols = [w * scale for w in widths]
    x0 = pdf.l_margin
    pdf.set_font("Helvetica", "B", size)
    bold = Measure(pdf)
    head_lines = [wrap(h, c - 2 * PAD, bold) for h, c in zip(head, cols, strict=True)]
    pdf.set_font("Helvetica", "", size)
    plain = Measure(pdf)
    ascent = line_h / 2 + size / pdf.k * 0.35  # baseline of a line in its line_h band
    pdf.set_line_width(0.2)

    def draw_row(lines: list[list[str]], n: int, style: str) -> None:
        y = pdf.get_y()
        h = n * line_h
        pdf.set_font("Helvetica", style, size)
        x = x0
        for col, cell in zip(cols, lines, strict=True):
            pdf.rect(x, y, col, h)
            top = y + (h - len(cell) * line_h) / 2 if len(cell) < n else y
            for i, text in enumerate(cell[:n]):
                if text:
                    pdf.text(x + PAD, top + i * line_h + ascent, text)
            x += col
        pdf.set_y(y + h)

    def heading() -> None:
        draw_row(head_lines, max(len(c) for c in head_lines), "B")

    def room() -> int:
        return int((pdf.page_break_trigger - pdf.get_y()) // line_h)

    head_n = max(len(c) for c in head_lines)
    if room() < head_n + 1:
        pdf.add_page()
    heading()
    for r in rows:
        lines = [wrap(c, col - 2 * PAD, plain) for c, col in zip(r, cols, strict=True)]
        n = max(len(c) for c in lines)
        if n > room() and n <= (pdf.page_break_trigger - pdf.t_margin) // line_h - head_n:
            pdf.add_page()  # the whole row fits on the next page: it goes there
            heading()
        while n > room():  # taller than a page: what fits here, the rest on the next
            take = max(room(), 1)
            draw_row([c[:take] for c in lines], take, "")
            lines = [c[take:] for c in lines]
            n -= take
            pdf.add_page()
            heading()
        draw_row(lines, n, "")
    pdf.set_font("Helvetica", "", size)
